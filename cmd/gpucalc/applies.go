package main

import "github.com/spf13/pflag"

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
