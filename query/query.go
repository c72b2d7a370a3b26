// Package query holds what every question's query type shares: the typed
// error that a query's Validate returns for one field, and the command line
// that a query prints to reproduce itself.
//
// Each question a user asks (occupancy, roofline, model, train, simulate,
// deploy) has one query type in its domain package, with its defaults as
// named constants, Validate() []FieldError, Answer() and Args(). The CLI
// maps flags onto it and the web maps form fields onto it; neither parses,
// defaults nor validates on its own, so both refuse the same input with the
// same words, and the web's "Copy as CLI" line is the query's Args.
package query

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one field of a query whose value is not allowed. Field is
// the name the CLI gives its flag (without dashes), which is also the web
// form's field; Value is what was given, as given; Allowed says what is
// allowed, in words that tell the user what to do next.
type FieldError struct {
	Field   string
	Value   string
	Allowed string
	// Source is where the value came from when not a flag: an argument
	// (FromArg: the field names the argument, Allowed says all, naming
	// the value) or an environment variable (FromEnv: Field is its name).
	Source Source
}

// Source is where a field's value came from.
type Source int

// Sources of a field's value.
const (
	FromFlag Source = iota
	FromArg
	FromEnv
)

// Error reads as the CLI words a bad flag: "--regs 300: at most 255 ...";
// an argument's error is its message, an environment variable's says so
// ("from GPUCALC_DEVICE: unknown device ...").
func (e *FieldError) Error() string {
	switch e.Source {
	case FromArg:
		return e.Allowed
	case FromEnv:
		return "from " + e.Field + ": " + e.Allowed
	}
	return "--" + e.Field + " " + Quote(e.Value) + ": " + e.Allowed
}

// Errors is every field error of one query, in the order of its fields.
type Errors []FieldError

// Err returns nil when there is no error, the single error itself when there
// is one, and all of them joined otherwise; errors.As finds a *FieldError in
// each case.
func (es Errors) Err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return &es[0]
	}
	errs := make([]error, len(es))
	for i := range es {
		errs[i] = &es[i]
	}
	return errors.Join(errs...)
}

// Fields returns the field errors in err (one *FieldError, or several
// joined, wrapped or not), and nil when err holds none.
func Fields(err error) Errors {
	for err != nil {
		if fe, ok := err.(*FieldError); ok {
			return Errors{*fe}
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			var out Errors
			for _, e := range j.Unwrap() {
				out = append(out, Fields(e)...)
			}
			return out
		}
		err = errors.Unwrap(err)
	}
	return nil
}

// Args is a command line under construction: the words after "gpucalc".
// A query's Args method adds only the flags whose values differ from the
// defaults, in a fixed order, so equal queries print equal lines.
type Args []string

// Add appends a flag with a value.
func (a *Args) Add(flag, value string) { *a = append(*a, "--"+flag, value) }

// Changed appends a flag with v (as fmt prints it) when v differs from
// def, the flag's default.
func Changed[T comparable](a *Args, flag string, v, def T) {
	if v != def {
		a.Add(flag, fmt.Sprint(v))
	}
}

// Bool appends a flag that takes no value, when on is true.
func (a *Args) Bool(flag string, on bool) {
	if on {
		*a = append(*a, "--"+flag)
	}
}

// Word appends a positional argument or a subcommand.
func (a *Args) Word(w string) { *a = append(*a, w) }

// String is the command line as a POSIX shell reads it, starting with
// "gpucalc"; a word that the shell would split or expand is single-quoted.
func (a Args) String() string {
	var b strings.Builder
	b.WriteString("gpucalc")
	for _, w := range a {
		b.WriteByte(' ')
		b.WriteString(Quote(w))
	}
	return b.String()
}

// Quote returns w as one shell word: as it is when it holds only characters
// that no shell treats specially, else single-quoted.
func Quote(w string) string {
	if w == "" {
		return "''"
	}
	for _, r := range w {
		if !safe(r) {
			return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return w
}

func safe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r)
}
