package ncu

import (
	"regexp"
	"strings"

	"github.com/gpucalc/gpucalc/symbol"
)

// Names longer than collapseAt have their nested template arguments
// collapsed; longer than maxName, they are cut.
const (
	collapseAt = 80
	maxName    = 120
)

var (
	// ncu's lambda form "[lambda(float) (instance 1)]" and the demangler's
	// "{lambda(float)#1}".
	lambdaRE = regexp.MustCompile(`\[lambda(\([^()]*\)) \(instance \d+\)\]|\{lambda(\([^()]*\))#\d+\}`)
	// Call operators between a lambda and the one nested in it.
	operatorRE = regexp.MustCompile(`::operator ?\(\)\([^()]*\)( const)?`)
	// Namespace and class qualifiers: "at::", "(anonymous namespace)::".
	qualifierRE = regexp.MustCompile(`(?:\b[A-Za-z_]\w*|<unnamed>|\(anonymous namespace\))::`)
	// A function's parameter list inside a name ("Impl(at::Iter&, int)::").
	paramsRE = regexp.MustCompile(`(\w)\([^()]*\)::`)
	// Runs of nested lambdas: keep the innermost.
	lambdasRE = regexp.MustCompile(`(?:lambda\([^()]*\)::)+lambda`)
	// The function that owns a lambda.
	ownerRE = regexp.MustCompile(`(\w+)::lambda\(`)
)

// ShortName turns a kernel name as ncu exports it (demangled, or mangled
// with --print-kernel-base mangled) into a short readable one: no return
// type, parameters or namespaces, lambdas reduced to their enclosing
// function, and template arguments nested past the first level collapsed
// when the name is long:
//
//	void at::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>, std::array<char *, 3>>(int, T2, T3)
//	→ vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char *, 3>>
func ShortName(name string) string {
	s := strings.TrimSpace(name)
	s = symbol.Demangle(s)
	s = stripParams(stripReturnType(s))
	s = lambdaRE.ReplaceAllString(s, "lambda$1$2")
	s = operatorRE.ReplaceAllString(s, "")
	s = lambdasRE.ReplaceAllString(s, "lambda")
	s = paramsRE.ReplaceAllString(s, "$1::")
	// The function a lambda is defined in names it: keep that qualifier
	// ("GeluCUDAKernelImpl::lambda(float)") and drop the others.
	s = ownerRE.ReplaceAllString(s, "$1\x00lambda(")
	s = qualifierRE.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\x00", "::")
	if len(s) > collapseAt {
		s = collapse(s, 1)
	}
	if r := []rune(s); len(r) > maxName {
		s = string(r[:maxName-1]) + "…"
	}
	if s == "" {
		return strings.TrimSpace(name)
	}
	return s
}

// stripReturnType drops what precedes the function name at the top level:
// "void ", "static __global__ void ".
func stripReturnType(s string) string {
	depth := 0
	last := -1
	for i, r := range s {
		switch r {
		case '<', '(', '[', '{':
			if depth == 0 {
				return cutAt(s, last)
			}
			depth++
		case '>', ')', ']', '}':
			depth--
		case ' ':
			if depth == 0 {
				last = i
			}
		}
	}
	return cutAt(s, last)
}

func cutAt(s string, space int) string {
	if space < 0 {
		return s
	}
	return s[space+1:]
}

// stripParams drops a trailing top-level parameter list "(int, T2, T3)".
func stripParams(s string) string {
	if !strings.HasSuffix(s, ")") {
		return s
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if i > 0 && strings.HasSuffix(s[:i], "operator") {
					return s
				}
				return strings.TrimRight(s[:i], " ")
			}
		}
	}
	return s
}

// collapse replaces template arguments nested deeper than keep levels
// with "…".
func collapse(s string, keep int) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '<':
			depth++
			if depth == keep+1 {
				b.WriteString("<…")
			}
			if depth > keep {
				continue
			}
		case '>':
			depth--
			if depth == keep {
				b.WriteRune('>')
				continue
			}
			if depth > keep {
				continue
			}
		}
		if depth > keep {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
