package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzScan: the scanner agrees with encoding/json on what is JSON, and on
// what it means: a valid value is read whole, kept as an equal value, and
// its strings read as encoding/json reads them; an invalid one is an error
// (or leaves bytes after the value).
func FuzzScan(f *testing.F) {
	for _, seed := range []string{small, `{"a":[1,2.5e3,-0,true,null,"x\"y\\u00e9\ud83d\ude00"]}`, `"\ud800"`, `[[[]]]`, `01`, `1.`, `"a` + "\x01" + `"`, `{"a" 1}`, "\"\xff\""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := newScanner(bytes.NewReader(b), bounds{event: 1 << 20})
		err := s.skip(true)
		rest := ""
		if err == nil {
			if _, e := s.space(); e == nil {
				rest = "bytes after the value"
			}
		}
		valid := json.Valid(b)
		switch {
		case valid && (err != nil || rest != ""):
			t.Fatalf("valid JSON %q: %v %s", b, err, rest)
		case !valid && err == nil && rest == "":
			t.Fatalf("invalid JSON %q read as %q", b, s.raw)
		case !valid:
			return
		}
		var want, got any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(s.raw, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q kept as %q: %v", b, s.raw, err)
		}
		if str, ok := want.(string); ok {
			s := newScanner(bytes.NewReader(b), bounds{event: 1 << 20})
			if v, err := s.text(); err != nil || v != str {
				t.Fatalf("string %q read as %q (%v), want %q", b, v, err, str)
			}
		}
	})
}

// TestScanLimits: a long literal, deep nesting and a run of blank space are
// bounded.
func TestScanLimits(t *testing.T) {
	for in, want := range map[string]string{
		strings.Repeat("1", 100):               "longer than 64 bytes",
		strings.Repeat("[", maxDepth+1):        "exceeded max depth",
		strings.Repeat(" ", 2<<20) + "1":       "",
		`"` + strings.Repeat("a", 2<<20) + `"`: "",
	} {
		s := newScanner(strings.NewReader(in), bounds{event: 1 << 20})
		err := s.skip(false)
		if want == "" {
			if err != errEventSize {
				t.Errorf("%.20q...: %v, want the event limit", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.20q...: %v, want %q", in, err, want)
		}
	}
}

// TestSpecial: special finds a quote, a backslash, a control character or
// a byte not ASCII at any of the eight places, and nothing among plain
// bytes.
func TestSpecial(t *testing.T) {
	for v := range 256 {
		want := v == '"' || v == '\\' || v < ' ' || v >= 0x80
		for at := range 8 {
			w := []byte("azAZ09 ~")
			w[at] = byte(v)
			if got := special(binary.LittleEndian.Uint64(w)); got != want {
				t.Errorf("%q at %d: %v, want %v", byte(v), at, got, want)
			}
		}
	}
}
