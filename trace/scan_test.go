package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
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

// TestPlainNumbers: a number read on the fast path (plain) reads as
// strconv reads it, a time as ParseFloat and a count as ParseInt, and
// anything plain does not take is left whole for literal: fractions of up
// to 17 digits, numbers past 2^53, leading zeros, exponents, signs, a
// number cut by the buffer's end.
func TestPlainNumbers(t *testing.T) {
	nums := []string{"0", "7", "10", "8.5", "0.5", "1700000000123.456", "6011337393733.491", "12345678901234567",
		"9007199254740993", "9007199254740992", "99999999999999999", "123456789012345678", "0.1", "0.30000000000000004",
		"1.7976931348623157", "4.2", "3.1", "0.000001", "1e5", "1E-3", "-4", "-0", "01", "00.5", "1.", "2.5e3",
		"123456789.12345678", "1.0000000000000002"}
	for _, n := range nums {
		for _, after := range []string{",", "}", "]", " ", "\n", ""} {
			src := n + after
			want, wantErr := strconv.ParseFloat(n, 64)
			if !validLiteral([]byte(n)) {
				want, wantErr = 0, errors.New("not JSON")
			}
			s := newScannerOf([]byte(src), bounds{event: 1 << 20})
			got, err := s.time("ts")
			if (err != nil) != (wantErr != nil) || err == nil && got != want {
				t.Errorf("time %q: %v, %v; want %v, %v", src, got, err, want, wantErr)
			}
			if err == nil && s.off != int64(len(n)) {
				t.Errorf("time %q: consumed %d bytes, want %d", src, s.off, len(n))
			}
			wantN, wantOK := int64(0), false
			if v, err := strconv.ParseInt(n, 10, 64); err == nil && validLiteral([]byte(n)) {
				wantN, wantOK = v, true
			}
			s = newScannerOf([]byte(src), bounds{event: 1 << 20})
			gotN, ok, err := s.count()
			if ok != wantOK || gotN != wantN || (err != nil) == validLiteral([]byte(n)) {
				t.Errorf("count %q: %d, %v, %v; want %d, %v", src, gotN, ok, err, wantN, wantOK)
			}
		}
	}
	for i := range 100000 { // fractions of every length, as torch.profiler writes times
		n := strconv.FormatFloat(float64(i)*1.37e-3+float64(i%7)*1e9, 'f', i%9, 64)
		s := newScannerOf([]byte(n+","), bounds{event: 1 << 20})
		got, err := s.time("dur")
		if want, _ := strconv.ParseFloat(n, 64); err != nil || got != want {
			t.Fatalf("time %q: %v, %v; ParseFloat: %v", n, got, err, want)
		}
	}
}

// TestFold: keys fold to lower case as bytes.ToLower folds ASCII, eight
// bytes at a time, leaving every other byte as it is.
func TestFold(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, k := range []string{"", "A", "External id", "Input Dims", "EST. ACHIEVED OCCUPANCY %", "@[`{AZaz", string(all), string(all[100:]) + "Zé" + string(all[:90])} {
		want := []byte(k)
		for i, c := range want {
			if c >= 'A' && c <= 'Z' {
				want[i] = c + 'a' - 'A'
			}
		}
		for off := range 8 { // every alignment
			if got := fold([]byte(k[min(off, len(k)):])); !bytes.Equal(got, want[min(off, len(k)):]) {
				t.Errorf("fold(%q) = %q, want %q", k[min(off, len(k)):], got, want[min(off, len(k)):])
			}
		}
	}
}
