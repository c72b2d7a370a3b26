// Package symbol demangles the C++ symbols of kernels (in build logs,
// Nsight Compute exports) with bounded cost: a mangled name's
// substitutions can make a few hundred bytes demangle to hundreds of MiB,
// so the output is capped by the input's length and absolutely, and a
// name too long to be a kernel's is left as it is. Every gpucalc reader
// demangles through it. Imports no gpucalc package.
package symbol

import (
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/ianlancetaylor/demangle"
)

const (
	// MaxMangled is the longest symbol demangled; longer ones are kept
	// mangled (it also bounds the demangler's recursion, one level per
	// nested name).
	MaxMangled = 16 << 10
	// MaxDemangled is the longest demangled name; the longest real kernel
	// names (CUTLASS templates) are a few KiB.
	MaxDemangled = 64 << 10
	// perByte is how many times its mangled length a demangled name may
	// be (real ones are 1 to 5 times; past it a name is cut), and minOut the cap for short names.
	perByte = 8
	minOut  = 1 << 10
)

// Demangle returns the readable form of a C++ symbol ("void
// block_reduce<float, 128>(float const*, float*, int)"), or the symbol
// itself when it is not mangled or too long. What it returns is at most
// Cap(len(name)) bytes; a name cut short ends in "…".
func Demangle(name string) string { return filter(name, demangle.NoClones) }

// Short is Demangle without the parameters: "block_reduce<float, 128>".
func Short(name string) string { return filter(name, demangle.NoParams) }

// Cap is the most bytes a symbol of n bytes demangles to.
func Cap(n int) int { return min(MaxDemangled, max(minOut, perByte*n)) }

func filter(name string, opt demangle.Option) string {
	if len(name) > MaxMangled || !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") {
		return name
	}
	limit := Cap(len(name))
	// The demangler stops printing past a power of two; cut at the cap.
	s := demangle.Filter(name, opt, demangle.MaxLength(bits.Len(uint(limit))))
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
