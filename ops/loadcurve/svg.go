// SPDX-License-Identifier: Apache-2.0

package loadcurve

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Point is one step of a sweep.
type Point struct {
	// Offered is the rate the step offered and Achieved the rate it
	// completed, in requests per second; Achieved is the x coordinate.
	Offered, Achieved float64
	// P50, P99 and P999 are the step's latency percentiles in
	// milliseconds. A step without a positive latency (nothing completed)
	// is left out of the drawing.
	P50, P99, P999 float64
}

// Curve is what WriteSVG draws.
type Curve struct {
	// Title heads the picture ("kretrieve load: gateway, traced 1%").
	Title  string
	Points []Point
}

// Series are the percentiles drawn, in legend order: the series' name (its
// class suffix and legend label), its colour and how to read it off a
// point.
var Series = []struct {
	Name  string
	Color string
	Value func(Point) float64
}{
	{"p50", "#1f77b4", func(p Point) float64 { return p.P50 }},
	{"p99", "#ff7f0e", func(p Point) float64 { return p.P99 }},
	{"p99.9", "#d62728", func(p Point) float64 { return p.P999 }},
}

// The picture's size and the plot area's margins, in pixels.
const (
	Width, Height                       = 760, 460
	marginLeft, marginRight, marginTop  = 80, 130, 50
	marginBottom                        = 60
	plotWidth, plotHeight               = Width - marginLeft - marginRight, Height - marginTop - marginBottom
	plotLeft, plotTop                   = marginLeft, marginTop
	plotRight, plotBottom               = plotLeft + plotWidth, plotTop + plotHeight
	tickLength                          = 5
	fontFamily                          = "sans-serif"
	fontSize, titleSize, axisLabelSize  = 12, 15, 13
	legendX, legendY, legendLineSpacing = plotRight + 20, plotTop + 10, 20
)

// ErrNoPoints is returned when no point has a positive latency to draw.
var ErrNoPoints = errors.New("loadcurve: no point with a latency to draw")

// WriteSVG writes c as an SVG document: latency in ms on a log scale (y)
// against achieved throughput in requests per second (x, linear from 0).
func WriteSVG(w io.Writer, c Curve) error {
	sc, ok := newScales(c.Points)
	if !ok {
		return ErrNoPoints
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="%d">
`, Width, Height, Width, Height, fontFamily, fontSize)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>
`, Width, Height)
	fmt.Fprintf(bw, `<text class="title" x="%d" y="%d" text-anchor="middle" font-size="%d">%s</text>
`, Width/2, marginTop/2+5, titleSize, escape(c.Title))

	// Grid and ticks first, so that the curves are drawn over them.
	for _, v := range sc.xTicks {
		x := sc.x(v)
		fmt.Fprintf(bw, `<g class="x-tick"><line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/><line x1="%s" y1="%d" x2="%s" y2="%d" stroke="black"/><text x="%s" y="%d" text-anchor="middle">%s</text></g>
`, f(x), plotTop, f(x), plotBottom, f(x), plotBottom, f(x), plotBottom+tickLength, f(x), plotBottom+tickLength+14, label(v))
	}
	for _, t := range sc.yTicks {
		y := sc.y(t.value)
		grid := "#eee"
		if t.major {
			grid = "#ccc"
		}
		fmt.Fprintf(bw, `<g class="y-tick"><line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s"/><line x1="%d" y1="%s" x2="%d" y2="%s" stroke="black"/>`,
			plotLeft, f(y), plotRight, f(y), grid, plotLeft-tickLength, f(y), plotLeft, f(y))
		if t.labelled {
			fmt.Fprintf(bw, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, plotLeft-tickLength-3, f(y), label(t.value))
		}
		fmt.Fprintln(bw, `</g>`)
	}
	fmt.Fprintf(bw, `<rect class="plot" x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>
`, plotLeft, plotTop, plotWidth, plotHeight)
	fmt.Fprintf(bw, `<text class="x-label" x="%d" y="%d" text-anchor="middle" font-size="%d">achieved throughput (requests/s)</text>
`, plotLeft+plotWidth/2, Height-15, axisLabelSize)
	fmt.Fprintf(bw, `<text class="y-label" transform="translate(%d %d) rotate(-90)" text-anchor="middle" font-size="%d">latency (ms, log scale)</text>
`, 20, plotTop+plotHeight/2, axisLabelSize)

	for i, s := range Series {
		var pts []string
		var marks strings.Builder
		for _, p := range c.Points {
			v := s.Value(p)
			if !drawable(p, v) {
				continue
			}
			x, y := f(sc.x(p.Achieved)), f(sc.y(v))
			pts = append(pts, x+","+y)
			fmt.Fprintf(&marks, `<circle class="point" cx="%s" cy="%s" r="3" fill="%s" data-achieved="%s" data-offered="%s" data-ms="%s"><title>%s: %s ms at %s req/s (offered %s)</title></circle>`,
				x, y, s.Color, num(p.Achieved), num(p.Offered), num(v), s.Name, num(v), num(p.Achieved), num(p.Offered))
		}
		fmt.Fprintf(bw, `<g class="series series-%s" data-percentile="%s"><polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>%s</g>
`, s.Name, s.Name, strings.Join(pts, " "), s.Color, marks.String())
		ly := legendY + i*legendLineSpacing
		fmt.Fprintf(bw, `<g class="legend"><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d" dominant-baseline="middle">%s</text></g>
`, legendX, ly, legendX+24, ly, s.Color, legendX+30, ly, s.Name)
	}
	fmt.Fprintln(bw, `</svg>`)
	return bw.Flush()
}

func drawable(p Point, v float64) bool {
	return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) && p.Achieved >= 0 && !math.IsInf(p.Achieved, 0) && !math.IsNaN(p.Achieved)
}

// scales maps data to pixels: x linear from 0 to xMax, y logarithmic
// from yLo to yHi (whole decades).
type scales struct {
	xMax, yLo, yHi float64
	xTicks         []float64
	yTicks         []yTick
}

type yTick struct {
	value           float64
	major, labelled bool
}

func newScales(points []Point) (scales, bool) {
	var sc scales
	minY, maxY, maxX := math.Inf(1), 0.0, 0.0
	for _, p := range points {
		for _, s := range Series {
			if v := s.Value(p); drawable(p, v) {
				minY, maxY, maxX = min(minY, v), max(maxY, v), max(maxX, p.Achieved)
			}
		}
	}
	if maxY == 0 {
		return sc, false
	}
	step := niceStep(max(maxX, 1) / 5)
	sc.xMax = math.Ceil(max(maxX, 1)/step) * step
	for i := 0.0; i*step <= sc.xMax+step/2; i++ {
		sc.xTicks = append(sc.xTicks, i*step)
	}
	lo, hi := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if hi == lo {
		hi++
	}
	sc.yLo, sc.yHi = math.Pow(10, lo), math.Pow(10, hi)
	few := hi-lo <= 2 // label 2 and 5 of each decade too
	for d := lo; d <= hi; d++ {
		base := math.Pow(10, d)
		sc.yTicks = append(sc.yTicks, yTick{value: base, major: true, labelled: true})
		if d < hi {
			for _, m := range []float64{2, 5} {
				sc.yTicks = append(sc.yTicks, yTick{value: m * base, labelled: few})
			}
		}
	}
	return sc, true
}

func (sc scales) x(v float64) float64 {
	return plotLeft + v/sc.xMax*plotWidth
}

func (sc scales) y(v float64) float64 {
	frac := (math.Log10(v) - math.Log10(sc.yLo)) / (math.Log10(sc.yHi) - math.Log10(sc.yLo))
	return plotBottom - frac*plotHeight
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// f formats a pixel coordinate.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// label formats a tick value: "0.1", "20", "1000".
func label(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// num formats a data value with up to 6 significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
