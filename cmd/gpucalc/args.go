package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// args validates positional arguments as a usage error, worded as the
// other usage errors are rather than as cobra's "accepts 1 arg(s),
// received 0".
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return usageError{argsError(cmd, a, err)}
		}
		return nil
	}
}

// argsError says what a command takes (the argument its Use line names)
// and what it got. A command that takes none and has subcommands reads an
// argument as a mistyped subcommand, with cobra's suggestions.
func argsError(cmd *cobra.Command, a []string, err error) error {
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	var got []string
	for _, x := range a {
		got = append(got, strconv.Quote(x))
	}
	if strings.HasPrefix(err.Error(), "unknown command") { // cobra.NoArgs
		if cmd.HasAvailableSubCommands() {
			msg := fmt.Sprintf("unknown command %q for %q", a[0], cmd.CommandPath())
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2
			}
			if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return errors.New(msg)
		}
		return fmt.Errorf("%s takes no arguments, only flags; got %s", path, strings.Join(got, " "))
	}
	// The argument is the first word of Use after the name: MODEL, FILE|-,
	// [CC], (WORKLOAD.yaml|- | ...).
	what := "one argument"
	if w := strings.Fields(cmd.Use); len(w) > 1 {
		what += ", " + strings.TrimPrefix(w[1], "(")
	}
	switch {
	case strings.Contains(err.Error(), "at most"):
		what = "at most " + what
	case strings.Contains(err.Error(), "at least"):
		what = strings.Replace(what, "one argument", "one or more arguments", 1)
	}
	if len(a) == 0 {
		return fmt.Errorf("%s takes %s; none given", path, what)
	}
	return fmt.Errorf("%s takes %s; got %d: %s", path, what, len(a), strings.Join(got, " "))
}
