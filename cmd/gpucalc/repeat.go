package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// onceValue is a flag that takes one value: given twice, it is refused
// rather than the last one winning silently ("--input A --input B" read
// only B). Lists (--op, --devices, --device-file) keep their own Set.
type onceValue struct {
	pflag.Value
	name string
	set  bool
	prev string
}

// repeated is what onceValue's error says; flagError finds it in the
// parser's wording of it.
const repeated = " is given twice ("

func (v *onceValue) Set(s string) error {
	if v.set {
		return fmt.Errorf("--%s%s%q, then %q): give it once", v.name, repeated, v.prev, s)
	}
	v.set, v.prev = true, s
	return v.Value.Set(s)
}

// onceFlags makes every single-value flag of c and its subcommands refuse
// a second value.
func onceFlags(c *cobra.Command) {
	wrap := func(fl *pflag.Flag) {
		if _, done := fl.Value.(*onceValue); done {
			return
		}
		if t := fl.Value.Type(); strings.HasSuffix(t, "Slice") || strings.HasSuffix(t, "Array") {
			return
		}
		fl.Value = &onceValue{Value: fl.Value, name: fl.Name}
	}
	c.Flags().VisitAll(wrap)
	c.PersistentFlags().VisitAll(wrap)
	for _, sub := range c.Commands() {
		onceFlags(sub)
	}
}
