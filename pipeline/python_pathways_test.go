package pipeline_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/internal/testutil/kafkapython"
	"github.com/kretrieve/kretrieve/pathway"
)

// pythonPathways is the Python stage's pathway-window module.
const pythonPathways = "../examples/python-stage/kretrieve_pathways.py"

// TestPythonBucketIndex: the Python stage's bucket_index is
// pathway.BucketIndex, bit for bit, on every bucket boundary (one
// nanosecond either side and on it), on small and huge durations, exact
// powers of two and random values.
func TestPythonBucketIndex(t *testing.T) {
	python := kafkapython.Python(t, "the Python stage's histogram buckets")
	var values []int64
	for ns := int64(1); ns <= 2000; ns++ {
		values = append(values, ns)
	}
	for i := -22 * 16; i <= 13*16; i++ {
		b := math.Exp2(float64(i)/16) * 1e9
		if b < 1 || b > math.MaxInt64/2 {
			continue
		}
		for _, v := range []int64{int64(math.Floor(b)) - 1, int64(math.Floor(b)), int64(math.Ceil(b)), int64(math.Ceil(b)) + 1} {
			values = append(values, max(v, 1))
		}
	}
	for e := 0; e < 63; e++ {
		values = append(values, 1<<e, 1<<e-1, 1<<e+1)
	}
	values = append(values, math.MaxInt64, math.MaxInt64-1, int64(time.Hour), int64(68*time.Minute), int64(100*time.Hour))
	r := rand.New(rand.NewPCG(1, 27))
	for range 20000 {
		values = append(values, 1+r.Int64N(int64(1)<<r.IntN(63)))
	}
	var in strings.Builder
	for _, v := range values {
		in.WriteString(strconv.FormatInt(v, 10) + "\n")
	}
	got := strings.Fields(runPython(t, python, in.String(), pythonPathways, "bucket-index"))
	if len(got) != len(values) {
		t.Fatalf("python printed %d indexes for %d values", len(got), len(values))
	}
	bad := 0
	for i, v := range values {
		if want := strconv.Itoa(pathway.BucketIndex(time.Duration(v))); got[i] != want {
			if bad++; bad <= 10 {
				t.Errorf("bucket_index(%d ns) = %s, pathway.BucketIndex = %s", v, got[i], want)
			}
		}
	}
	t.Logf("%d values, %d differ", len(values), bad)
}

// TestPythonBucketBoundaries: the mantissas of the bucket boundaries
// 2^(j/16) the Python stage searches are those package pathway computes
// with math.Exp2 (Python's 2 ** x differs from it in the last bit for
// three of them, which no nanosecond value may reach, but bit for bit is
// the contract).
func TestPythonBucketBoundaries(t *testing.T) {
	python := kafkapython.Python(t, "the Python stage's histogram buckets")
	var want []string
	for j := 1; j < 16; j++ {
		want = append(want, strconv.FormatUint(math.Float64bits(math.Exp2(float64(j)/16))&(1<<52-1), 16))
	}
	want = append(want, strconv.FormatUint(1<<52, 16))
	if got := strings.Fields(runPython(t, python, "", pythonPathways, "boundary-mantissas")); !slices.Equal(got, want) {
		t.Errorf("python boundary mantissas\n%v\nwant (Go's math.Exp2)\n%v", got, want)
	}
}

// runPython runs python with args and stdin, and returns its stdout.
func runPython(t *testing.T, python, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), python, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python %v: %v: %s", args, err, stderr.String())
	}
	return string(out)
}
