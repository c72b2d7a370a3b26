package symbol

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// nested is a mangled name whose template argument nests depth levels,
// each naming the level below twice by substitution: its demangled form
// grows about 2.6 times a level (100 KiB at depth 18, hundreds of MiB
// past 25).
func nested(depth int) string {
	inner := "1AIiiE"
	for j := 2; j <= depth; j++ {
		inner = "S_I" + inner + "S" + strings.ToUpper(strconv.FormatInt(int64(j-2), 36)) + "_E"
	}
	return "_Z1fI" + inner + "EvT_"
}

func TestDemangle(t *testing.T) {
	tests := []struct{ in, full, short string }{
		{"_Z12block_reduceIfLi128EEvPKT_PS0_i", "void block_reduce<float, 128>(float const*, float*, int)", "block_reduce<float, 128>"},
		{"_Z6kernelPf.constprop.0", "kernel(float*)", "kernel"},
		{"plain_c_kernel", "plain_c_kernel", "plain_c_kernel"},
		{"_Znot a symbol", "_Znot a symbol", "_Znot a symbol"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Demangle(tt.in); got != tt.full {
			t.Errorf("Demangle(%q) = %q, want %q", tt.in, got, tt.full)
		}
		if got := Short(tt.in); got != tt.short {
			t.Errorf("Short(%q) = %q, want %q", tt.in, got, tt.short)
		}
	}
}

// TestDemangleBounded: however deep the nesting, the output stays within
// Cap of the input and comes back at once.
func TestDemangleBounded(t *testing.T) {
	for _, depth := range []int{5, 18, 25, 40, 200} {
		in := nested(depth)
		start := time.Now()
		for _, f := range []func(string) string{Demangle, Short} {
			out := f(in)
			if len(out) > Cap(len(in)) || len(out) > MaxDemangled {
				t.Errorf("depth %d: %d bytes in, %d out (cap %d)", depth, len(in), len(out), Cap(len(in)))
			}
			if !strings.HasPrefix(out, "void f<") && !strings.HasPrefix(out, "f<") {
				t.Errorf("depth %d: %.40q", depth, out)
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("depth %d: %v", depth, d)
		}
	}
	long := "_Z" + strings.Repeat("N1a", MaxMangled)
	if got := Demangle(long); got != long {
		t.Errorf("a symbol over MaxMangled was demangled")
	}
}

func FuzzDemangle(f *testing.F) {
	f.Add("_Z12block_reduceIfLi128EEvPKT_PS0_i")
	f.Add(nested(30))
	f.Add("_RNvCs1234_7mycrate3foo")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Demangle(s), Short(s)} {
			if len(out) > max(len(s), Cap(len(s))) {
				t.Fatalf("%d bytes in, %d out", len(s), len(out))
			}
		}
	})
}
