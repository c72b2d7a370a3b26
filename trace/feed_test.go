package trace

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/gpucalc/gpucalc/internal/synth"
	"github.com/gpucalc/gpucalc/internal/testfile"
)

// onCores runs f with at least two processors, as reading in parts needs.
func onCores(t *testing.T, f func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	f()
}

// sameRead reads b on one core and in parts of part bytes, and fails
// unless both give the same trace, or the same error word for word. It
// returns the parts taken whole.
func sameRead(t *testing.T, b []byte, lim bounds, part int) int {
	t.Helper()
	lim.part = -1
	one, _, oneErr := readParts(bytes.NewReader(b), lim)
	lim.part = part
	var parts *Trace
	var partsErr error
	var adopted int
	onCores(t, func() { parts, adopted, partsErr = readParts(bytes.NewReader(b), lim) })
	if fmt.Sprint(oneErr) != fmt.Sprint(partsErr) {
		t.Fatalf("on one core: %v\nin parts of %d bytes: %v", oneErr, part, partsErr)
	}
	if (one == nil) != (parts == nil) {
		t.Fatalf("on one core a trace %t, in parts %t", one != nil, parts != nil)
	}
	if one == nil {
		return adopted
	}
	if one.Events != parts.Events || !reflect.DeepEqual(one.Devices, parts.Devices) || one.RecordShapes != parts.RecordShapes ||
		!reflect.DeepEqual(one.Distributed, parts.Distributed) {
		t.Fatalf("on one core %d events, in parts %d (or the devices, shapes flag or rank differ)", one.Events, parts.Events)
	}
	same(t, "ops", &one.Ops, &parts.Ops)
	same(t, "kernels", &one.Kernels, &parts.Kernels)
	same(t, "launches", &one.Launches, &parts.Launches)
	same(t, "transfers", &one.Transfers, &parts.Transfers)
	return adopted
}

func same[T any](t *testing.T, what string, one, parts interface {
	Len() int
	At(int) *T
}) {
	t.Helper()
	if one.Len() != parts.Len() {
		t.Fatalf("%s: %d on one core, %d in parts", what, one.Len(), parts.Len())
	}
	for i := range one.Len() {
		if !reflect.DeepEqual(*one.At(i), *parts.At(i)) {
			t.Fatalf("%s %d: %+v on one core, %+v in parts", what, i, *one.At(i), *parts.At(i))
		}
	}
}

// TestPartsAsOneCore: the recorded traces, read in parts on several cores,
// give what they give on one, and most parts are taken whole.
func TestPartsAsOneCore(t *testing.T) {
	for _, file := range []string{"trace_resnet50_train.json.gz", "trace_llama1b_infer.json.gz"} {
		t.Run(file, func(t *testing.T) {
			b := testfile.Gunzip(t, "testdata/"+file)
			part := len(b) / 40
			if n := sameRead(t, b, bounds{bytes: MaxBytes, events: MaxEvents, event: maxEventBytes}, part); n < 30 {
				t.Errorf("%d of about 40 parts taken whole", n)
			}
		})
	}
}

// TestPartsErrors: malformed traces give the error they give on one core,
// word for word (event, line, byte), wherever the fault lies among the
// parts, as do the limits on events kept and an event's size.
func TestPartsErrors(t *testing.T) {
	valid, err := io.ReadAll(synth.Trace(600))
	if err != nil {
		t.Fatal(err)
	}
	lim := bounds{bytes: MaxBytes, events: MaxEvents, event: maxEventBytes}
	if n := sameRead(t, valid, lim, 700); n < len(valid)/700/2 {
		t.Fatalf("%d parts of %d taken whole from a valid trace", n, len(valid)/700)
	}
	for _, events := range []int{1, 1000, 1799, 1800} {
		sameRead(t, valid, bounds{bytes: MaxBytes, events: events, event: maxEventBytes}, 700)
	}
	sameRead(t, valid, bounds{bytes: int64(len(valid)) / 2, events: MaxEvents, event: maxEventBytes}, 700)
	sameRead(t, valid, bounds{bytes: MaxBytes, events: MaxEvents, event: 2000}, 700)
	faults := []struct {
		name string
		at   func(b []byte, i int) []byte
	}{
		{"cut", func(b []byte, i int) []byte { return b[:i] }},
		{"a stray byte", func(b []byte, i int) []byte { return insert(b, i, "x") }},
		{"a quote", func(b []byte, i int) []byte { return insert(b, i, `"`) }},
		{"a brace", func(b []byte, i int) []byte { return insert(b, i, "}") }},
		{"a bracket", func(b []byte, i int) []byte { return insert(b, i, "[") }},
		{"a comma", func(b []byte, i int) []byte { return insert(b, i, ",") }},
		{"a newline", func(b []byte, i int) []byte { return insert(b, i, "\n") }},
		{"a control character", func(b []byte, i int) []byte { return insert(b, i, "\x01") }},
		{"a bad escape", func(b []byte, i int) []byte { return insert(b, i, `\q`) }},
		{"an event boundary", func(b []byte, i int) []byte { return insert(b, i, "},\n{") }},
		{"a negative duration", func(b []byte, i int) []byte { return replaceAfter(b, i, `"dur": `, `"dur": -`) }},
		{"a time that is not a number", func(b []byte, i int) []byte { return replaceAfter(b, i, `"ts": `, `"ts": "x", "q": `) }},
		{"a huge time", func(b []byte, i int) []byte { return replaceAfter(b, i, `"dur": `, `"dur": 1e400, "q": `) }},
		{"negative bytes", func(b []byte, i int) []byte {
			return replaceAfter(b, i, `"External id": `, `"bytes": -5, "External id": `)
		}},
		{"a long name", func(b []byte, i int) []byte {
			return replaceAfter(b, i, `"name": "`, `"name": "`+string(bytes.Repeat([]byte("n"), 70<<10)))
		}},
		{"a second array", func(b []byte, i int) []byte { return replaceAfter(b, i, "},\n{", "}],\n[{") }},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			for range 12 {
				i := rng.IntN(len(valid))
				sameRead(t, f.at(bytes.Clone(valid), i), lim, 512+rng.IntN(1024))
			}
		})
	}
}

func insert(b []byte, i int, s string) []byte {
	return append(b[:i:i], append([]byte(s), b[i:]...)...)
}

// replaceAfter replaces the first old at or after i (or before, if none).
func replaceAfter(b []byte, i int, old, new string) []byte {
	j := bytes.Index(b[i:], []byte(old))
	if j < 0 {
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
	return append(b[:i+j:i+j], append([]byte(new), b[i+j+len(old):]...)...)
}
