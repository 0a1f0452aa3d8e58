// SPDX-License-Identifier: Apache-2.0

package loadcurve

import (
	"bytes"
	"encoding/xml"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

type svgDoc struct {
	Width  string    `xml:"width,attr"`
	Height string    `xml:"height,attr"`
	Texts  []svgText `xml:"text"`
	Groups []svgG    `xml:"g"`
}

type svgG struct {
	Class      string      `xml:"class,attr"`
	Percentile string      `xml:"data-percentile,attr"`
	Lines      []svgLine   `xml:"line"`
	Texts      []svgText   `xml:"text"`
	Polyline   svgPoly     `xml:"polyline"`
	Circles    []svgCircle `xml:"circle"`
}

type svgText struct {
	Class string  `xml:"class,attr"`
	X     float64 `xml:"x,attr"`
	Y     float64 `xml:"y,attr"`
	Text  string  `xml:",chardata"`
}

type svgLine struct {
	X1 float64 `xml:"x1,attr"`
	Y1 float64 `xml:"y1,attr"`
}

type svgPoly struct {
	Points string `xml:"points,attr"`
}

type svgCircle struct {
	CX       float64 `xml:"cx,attr"`
	CY       float64 `xml:"cy,attr"`
	Achieved float64 `xml:"data-achieved,attr"`
	Offered  float64 `xml:"data-offered,attr"`
	MS       float64 `xml:"data-ms,attr"`
}

// TestWriteSVGMapsPointsToTheirData draws a sweep, parses the SVG and reads
// every point back through the drawn axes: the x ticks' labels and
// positions give the linear throughput scale, two labelled decades of the
// y axis the logarithmic latency scale.
func TestWriteSVGMapsPointsToTheirData(t *testing.T) {
	c := Curve{
		Title: "kretrieve load: gateway <traced 1%> & more",
		Points: []Point{
			{Offered: 100, Achieved: 99.5, P50: 1.8, P99: 4.2, P999: 9.7},
			{Offered: 200, Achieved: 198, P50: 2.1, P99: 6, P999: 15},
			{Offered: 400, Achieved: 390, P50: 3.5, P99: 30, P999: 0}, // no p99.9
			{Offered: 800, Achieved: 512, P50: 250, P99: 900, P999: 1200},
		},
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, c); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if doc.Width != strconv.Itoa(Width) || doc.Height != strconv.Itoa(Height) {
		t.Errorf("size %s×%s", doc.Width, doc.Height)
	}
	texts := map[string]string{}
	for _, tx := range doc.Texts {
		texts[tx.Class] = tx.Text
	}
	if texts["title"] != c.Title || !strings.Contains(texts["x-label"], "throughput") || !strings.Contains(texts["y-label"], "latency") {
		t.Errorf("title and labels %q", texts)
	}

	var xTicks, yTicks [][2]float64 // value, pixel
	series := map[string]svgG{}
	var legend []string
	for _, g := range doc.Groups {
		switch {
		case g.Class == "x-tick":
			xTicks = append(xTicks, [2]float64{parse(t, g.Texts[0].Text), g.Lines[0].X1})
		case g.Class == "y-tick" && len(g.Texts) == 1:
			yTicks = append(yTicks, [2]float64{parse(t, g.Texts[0].Text), g.Lines[0].Y1})
		case strings.HasPrefix(g.Class, "series "):
			series[g.Percentile] = g
		case g.Class == "legend":
			legend = append(legend, g.Texts[0].Text)
		}
	}
	if len(xTicks) < 3 || len(yTicks) < 3 || xTicks[0][0] != 0 {
		t.Fatalf("x ticks %v, y ticks %v", xTicks, yTicks)
	}
	if strings.Join(legend, ",") != "p50,p99,p99.9" {
		t.Errorf("legend %v", legend)
	}
	// The axes span the data: x from 0 past the highest throughput, y
	// from a decade at or below the lowest latency to one at or above the
	// highest.
	lastX, lastY := xTicks[len(xTicks)-1][0], yTicks[len(yTicks)-1][0]
	if lastX < 512 || lastX > 1000 || yTicks[0][0] > 1.8 || lastY < 1200 {
		t.Errorf("axes end at x %v, y %v..%v", lastX, yTicks[0][0], lastY)
	}
	xOf := linear(xTicks[0], xTicks[len(xTicks)-1])
	logY := linear([2]float64{math.Log10(yTicks[0][0]), yTicks[0][1]}, [2]float64{math.Log10(lastY), yTicks[len(yTicks)-1][1]})
	yOf := func(px float64) float64 { return math.Pow(10, logY(px)) }

	for _, s := range Series {
		g, ok := series[s.Name]
		if !ok {
			t.Fatalf("no series %s", s.Name)
		}
		var want []Point
		for _, p := range c.Points {
			if s.Value(p) > 0 {
				want = append(want, p)
			}
		}
		poly := strings.Fields(g.Polyline.Points)
		if len(poly) != len(want) || len(g.Circles) != len(want) {
			t.Fatalf("%s: %d polyline points, %d circles, want %d", s.Name, len(poly), len(g.Circles), len(want))
		}
		for i, p := range want {
			cx, cy := g.Circles[i].CX, g.Circles[i].CY
			if poly[i] != strconv.FormatFloat(cx, 'f', 2, 64)+","+strconv.FormatFloat(cy, 'f', 2, 64) {
				t.Errorf("%s point %d: polyline %s, circle %v,%v", s.Name, i, poly[i], cx, cy)
			}
			if !near(xOf(cx), p.Achieved, 0.5) || !near(yOf(cy)/s.Value(p), 1, 0.01) {
				t.Errorf("%s point %d at (%v, %v) reads back as %.2f req/s, %.3f ms; want %v, %v", s.Name, i, cx, cy, xOf(cx), yOf(cy), p.Achieved, s.Value(p))
			}
			if ci := g.Circles[i]; ci.Achieved != p.Achieved || ci.Offered != p.Offered || ci.MS != s.Value(p) {
				t.Errorf("%s point %d data %+v, want %+v", s.Name, i, ci, p)
			}
		}
	}
}

func TestWriteSVGWithoutLatencies(t *testing.T) {
	var buf bytes.Buffer
	for _, pts := range [][]Point{nil, {{Offered: 100, Achieved: 0}}} {
		if err := WriteSVG(&buf, Curve{Points: pts}); !errors.Is(err, ErrNoPoints) {
			t.Errorf("%v: err %v", pts, err)
		}
	}
}

// TestWriteSVGOnePoint: one step still has axes of some extent.
func TestWriteSVGOnePoint(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, Curve{Points: []Point{{Offered: 10, Achieved: 10, P50: 2, P99: 2, P999: 2}}}); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		t.Fatalf("non-finite coordinates:\n%s", s)
	}
}

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0.3: 0.5, 1: 1, 1.5: 2, 3: 5, 7: 10, 80: 100, 101: 200, 2400: 5000} {
		if got := niceStep(raw); !near(got, want, 1e-9) {
			t.Errorf("niceStep(%v) = %v, want %v", raw, got, want)
		}
	}
}

// linear returns the map from pixel to value through the two (value,
// pixel) pairs.
func linear(a, b [2]float64) func(float64) float64 {
	return func(px float64) float64 { return a[0] + (px-a[1])*(b[0]-a[0])/(b[1]-a[1]) }
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("tick label %q: %v", s, err)
	}
	return v
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
