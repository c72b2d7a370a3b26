package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// flagWord is a flag named in output: "--dtype", "(--ckpt full)".
var flagWord = regexp.MustCompile(`(?:^|[\s(\['"=,])(--[a-z][a-z0-9-]*)`)

// commandWord is a command named in output: 'gpucalc model list'.
var commandWord = regexp.MustCompile(`gpucalc((?: [a-z][a-z-]*)+)`)

// hasFlag reports whether the command at path (or its parents' persistent
// flags) defines flag.
func hasFlag(root *cobra.Command, path []string, flag string) bool {
	c, _, err := root.Find(path)
	if err != nil || c == nil {
		return false
	}
	name := strings.TrimPrefix(flag, "--")
	if name == "help" || name == "version" {
		return true // cobra's own, on every command
	}
	return c.Flags().Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil
}

// TestAdviceNamesRealFlags: every flag that output names (errors, notes,
// findings' fixes, changes) exists on the command that printed it, or on
// the command the same line names. (Advice named --dtype fp16 on roofline
// and train, which have no --dtype.)
func TestAdviceNamesRealFlags(t *testing.T) {
	root := newCmdRoot(&factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }})
	cases := widthCases(t)
	for _, args := range [][]string{
		{"roofline", "--device", "v100", "--op", "matmul m=64 n=64 k=64"},
		{"roofline", "--devices", "h100,v100", "--op", "matmul m=64 n=64 k=64"},
		{"model", "llama-3.1-8b", "--device", "t4"},
		{"train", "llama-3.2-1b", "--device", "v100"},
		{"check", "--model", "llama-3.1-8b", "--device", "t4"},
		{"check", "examples/llama3-8b-decode.yaml", "--device", "v100"},
		{"train", "llama-3.1-8b", "--batch", "8", "--seq", "4096"},
		{"train", "llama-3.2-1b", "--precision", "mixed", "--batch", "4", "--seq", "4096", "--gpus", "2"},
		{"check", "--model", "llama-3.1-8b", "--phase", "train", "--batch", "8", "--seq", "4096"},
		{"model", "llama-3.1-70b", "--batch", "32", "--ctx", "8192"},
		{"check", "--model", "llama-3.1-70b", "--batch", "32", "--ctx", "8192"},
	} {
		cases = append(cases, widthCase{name: strings.Join(args, " "), args: args})
	}
	checked := 0
	inScratchRepo(t, func() {
		for _, c := range cases {
			var out, errOut bytes.Buffer
			f := newFactory(bytes.NewReader(c.stdin), &out, &errOut, func(string) string { return "" })
			runFactory(f, c.args)
			var path []string
			for _, a := range c.args {
				if strings.HasPrefix(a, "-") {
					break
				}
				path = append(path, a)
			}
			for _, line := range strings.Split(out.String()+"\n"+errOut.String(), "\n") {
				for _, m := range flagWord.FindAllStringSubmatch(line, -1) {
					flag := m[1]
					checked++
					ok := hasFlag(root, path, flag)
					for _, cm := range commandWord.FindAllStringSubmatch(line, -1) {
						ok = ok || hasFlag(root, strings.Fields(cm[1]), flag)
					}
					if !ok {
						t.Errorf("%s: gpucalc %s names %s, which it has not:\n%s", c.name, strings.Join(c.args, " "), flag, line)
					}
				}
			}
		}
	})
	if checked < 50 {
		t.Fatalf("only %d flags named in all the output; the walk is broken", checked)
	}
}

// TestAdviceNamesTheFlag: where a GPU lacks the type a question asks for
// (bf16 on a T4 or V100), the advice names the flag that gave that type,
// not just the type ('use fp16 instead' alone, as model's field error
// said, leaves the user to guess the flag).
func TestAdviceNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"model", "llama-3.1-8b", "--device", "t4"}, "use fp16 instead (--dtype fp16)"},
		{[]string{"model", "llama-3.1-8b", "--devices", "t4,v100"}, "use fp16 instead (--dtype fp16)"},
		{[]string{"model", "llama-3.1-8b", "--devices", "h100,t4"}, "use fp16 instead (--dtype fp16)."},
		{[]string{"model", "llama-3.1-8b", "--device", "t4", "--dtype", "fp16", "--kv", "bf16"}, "use fp16 instead (--kv fp16)"},
		{[]string{"model", "llama-3.1-8b", "--device", "t4", "--dtype", "fp16", "--weights", "bf16"}, "use fp16 instead (--weights fp16)"},
		{[]string{"roofline", "--device", "v100", "--op", "matmul m=64 n=64 k=64"}, "use fp16 instead (dtype=fp16 in the op spec)"},
		{[]string{"train", "llama-3.2-1b", "--device", "v100"}, "no flag sets fp16"},
	} {
		var out, errOut bytes.Buffer
		f := newFactory(strings.NewReader(""), &out, &errOut, func(string) string { return "" })
		runFactory(f, c.args)
		if got := out.String() + errOut.String(); !strings.Contains(got, c.want) {
			t.Errorf("gpucalc %s: want %q in\n%s", strings.Join(c.args, " "), c.want, got)
		}
	}
}
