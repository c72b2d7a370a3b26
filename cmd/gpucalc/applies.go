package main

import (
	"strconv"

	"github.com/spf13/pflag"
)

// onlyWith refuses a flag among names that was given where it does not
// apply (applies false): a LoRA rank without --method lora, a training
// flag in a serving phase. Ignored silently, it would answer another
// question than the one asked.
func onlyWith(fs *pflag.FlagSet, applies bool, to string, names ...string) error {
	if applies || fs == nil {
		return nil
	}
	for _, n := range names {
		if fs.Changed(n) {
			return usagef("--%s applies only with %s: give %s, or leave --%s out", n, to, to, n)
		}
	}
	return nil
}

// notZero refuses a numeric flag among names given as 0 where its zero
// value stands for a default: --concurrency 0 would otherwise answer for
// the default concurrency.
func notZero(fs *pflag.FlagSet, names ...string) error {
	if fs == nil {
		return nil
	}
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil || !f.Changed {
			continue
		}
		if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && v == 0 {
			return usagef("--%s 0: expected more than 0; leave --%s out for its default", n, n)
		}
	}
	return nil
}
