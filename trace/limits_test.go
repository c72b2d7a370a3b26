package trace

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/rows"
)

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// allocatedLive is allocated without the collection first (for fuzzing,
// where a collection per input costs too much).
func allocatedLive(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadBombs: inputs that are small, or small once compressed, but
// expand to more than any event can be are refused as they stream, with
// little memory: gzip bombs, runs of blank space, and overlong strings,
// wherever they sit.
func TestReadBombs(t *testing.T) {
	const n = 48 << 20
	spaces := strings.Repeat(" ", n)
	head := `{"deviceProperties":[{"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0}],"traceEvents":[`
	cases := []struct {
		name, in, want string
	}{
		{"gzip of zeros", string(gz(make([]byte, n))), "not valid JSON at byte 1"},
		{"gzip of blank space", string(gz([]byte(spaces))), "compression bomb"},
		{"gzip of blank space between events", string(gz([]byte(head + spaces + "]}"))), "compression bomb"},
		{"blank space before the object", spaces + "{}", "without a complete event"},
		{"blank space between events", head + spaces + "]}", "without a complete event"},
		{"blank space inside an event", head + `{"ph":"X",` + spaces + `"cat":"kernel"}]}`, "without a complete event"},
		{"a name of 48 MiB", head + `{"ph":"X","cat":"kernel","name":"` + strings.Repeat("a", n) + `"}]}`, "without a complete event"},
		{"a top-level value of 48 MiB", `{"distributedInfo":"` + strings.Repeat("a", n) + `"}`, "without a complete event"},
		{"deep nesting", `{"x":` + strings.Repeat("[", n) + `}`, "exceeded max depth"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = Read(strings.NewReader(c.in)) })
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line with %q", err, c.want)
			}
			if alloc > 100<<20 {
				t.Errorf("allocated %d MiB before refusing", alloc>>20)
			}
		})
	}
}

// TestReadLimits: the limits on size, events and names, each named in its
// error with what to do.
func TestReadLimits(t *testing.T) {
	long := strings.Replace(small, `"name":"k"`, `"name":"`+strings.Repeat("k", rows.MaxName+1)+`"`, 1)
	if _, err := Read(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "over the 64 KiB names may have") {
		t.Errorf("a name over rows.MaxName: %v", err)
	}
	_, err := readBounded(strings.NewReader(small), bounds{bytes: MaxBytes, events: 2, event: maxEventBytes})
	if err == nil || !strings.Contains(err.Error(), "more than 2 ops, kernels") || !strings.Contains(err.Error(), "schedule(") {
		t.Errorf("past the events kept: %v", err)
	}
	_, err = readBounded(strings.NewReader(small), bounds{bytes: 200, events: MaxEvents, event: maxEventBytes})
	var se *rows.SizeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "larger than 200 bytes decompressed") {
		t.Errorf("past the size: %v", err)
	}
	if _, err := readBounded(strings.NewReader(small), bounds{bytes: MaxBytes, events: 3, event: 1 << 10}); err != nil {
		t.Errorf("within the limits: %v", err)
	}
}

// TestReadImplausible: durations that cannot be real are refused with
// their line, and so are kernels from GPUs that differ.
func TestReadImplausible(t *testing.T) {
	multiline := strings.ReplaceAll(small, "},\n{", "},\n\n{")
	cases := []struct {
		name, in, want string
	}{
		{"negative kernel", strings.Replace(small, `"ts":40,"dur":3`, `"ts":40,"dur":-3`, 1), `event 3 (line 4): kernel "k" lasts -3 µs`},
		{"negative op", strings.Replace(small, `"dur":20`, `"dur":-0.5`, 1), `event 1 (line 2): cpu_op "aten::mm" lasts -0.5 µs`},
		{"negative on a later line", strings.Replace(multiline, `"ts":40,"dur":3`, `"ts":40,"dur":-3`, 1), "event 3 (line 6)"},
		{"negative copy", withEvent(small, `{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","ts":50,"dur":-1e9}`), `gpu_memcpy "Memcpy HtoD" lasts -1e+09 µs`},
		{"negative bytes", withEvent(small, `{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD","ts":50,"dur":1,"args":{"bytes":-4096}}`), `gpu_memcpy "Memcpy DtoD" moves -4096 bytes`},
		{"out of range", strings.Replace(small, `"ts":40,"dur":3`, `"ts":40,"dur":1e400`, 1), `event 3 (line 4): "dur" is number 1e400, not a number`},
		{"time not a number", strings.Replace(small, `"ts":40,"dur":3`, `"ts":"NaN","dur":3`, 1), `"ts" is string`},
		{"two GPUs", strings.Replace(strings.Replace(small, `"computeMinor":0}]`, `"computeMinor":0,"id":0},{"name":"NVIDIA A100-SXM4-80GB","computeMajor":8,"computeMinor":0,"id":1}]`, 1),
			`"stream":7,`, `"stream":7,"device":1,`, 1) + "", "the kernels ran on different GPUs"},
	}
	cases = append(cases, struct{ name, in, want string }{"one ID, two GPUs",
		strings.Replace(small, `"computeMinor":0}]`, `"computeMinor":0},{"name":"NVIDIA A100-SXM4-80GB","computeMajor":8,"computeMinor":0}]`, 1),
		"deviceProperties gives device 0 twice, as different GPUs"})
	// The two-GPU case needs a kernel on each.
	cases[len(cases)-2].in = withEvent(cases[len(cases)-2].in, `{"ph":"X","cat":"kernel","name":"k2","ts":44,"dur":1,"args":{"device":0}}`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// Several GPUs of one kind are one GPU; deviceProperties listing a
	// GPU no kernel ran on does not matter, and the kernels' GPU names
	// the device.
	same := strings.Replace(small, `"computeMinor":0}]`, `"computeMinor":0,"id":0},{"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0,"id":1}]`, 1)
	same = withEvent(same, `{"ph":"X","cat":"kernel","name":"k2","ts":44,"dur":1,"args":{"device":1}}`)
	if _, err := Read(strings.NewReader(same)); err != nil {
		t.Errorf("two H100s: %v", err)
	}
	other := strings.Replace(small, `"computeMinor":0}]`, `"computeMinor":0,"id":1},{"name":"NVIDIA A100-SXM4-80GB","computeMajor":8,"computeMinor":0,"id":0}]`, 1)
	tr, err := Read(strings.NewReader(other))
	if err != nil || tr.DeviceName() != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("kernels on device 0, listed second: %v, device %q", err, tr.DeviceName())
	}
}

// TestReadLines: the line an error names is the event's.
func TestReadLines(t *testing.T) {
	s := newScanner(strings.NewReader("{\n\"a\":\n[1,\n2]\n}\n"), bounds{event: 1 << 20})
	if err := s.skip(false); err != nil {
		t.Fatal(err)
	}
	if s.line != 5 {
		t.Errorf("line %d after the object, want 5", s.line)
	}
}

// withEvent adds an event at the end of a trace's traceEvents.
func withEvent(trace, event string) string {
	i := strings.LastIndex(trace, "]}")
	return trace[:i] + "," + event + trace[i:]
}

// TestReadTolerates: values of other kinds than torch.profiler writes are
// skipped, as encoding/json skipped them: an event that is not an object, a
// field of another type, and PyTorch 1.8's lower-case keys.
func TestReadTolerates(t *testing.T) {
	for name, in := range map[string]string{
		"a number among the events": withEvent(small, `1`),
		"a list among the events":   withEvent(small, `[{"ph":"X"}]`),
		"grid as a string":          strings.Replace(small, `"grid":[1,1,1]`, `"grid":"1,1,1"`, 1),
		"stream as a float":         strings.Replace(small, `"stream":7`, `"stream":7.5`, 1),
		"args as null":              withEvent(small, `{"ph":"X","cat":"kernel","name":"k2","ts":50,"dur":1,"args":null}`),
		"upper-case keys":           strings.Replace(small, `"traceEvents"`, `"TRACEEVENTS"`, 1),
	} {
		if _, err := Read(strings.NewReader(in)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
