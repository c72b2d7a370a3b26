package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// leafCommands lists the path of every runnable command, from the tree
// itself, so a new command is covered without editing this test.
func leafCommands() [][]string {
	f := &factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Runnable() && len(path) > 0 {
			out = append(out, path)
		}
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newCmdRoot(f), nil)
	return out
}

// takesFile says how a command names its input file: as its argument, with
// --input, or not at all.
func takesFile(c *cobra.Command) string {
	switch {
	case c.Flags().Lookup("input") != nil:
		return "--input"
	case c.Flags().Lookup("workload") != nil:
		return "--workload"
	case strings.Contains(c.Use, "FILE") || strings.Contains(c.Use, "WORKLOAD") || strings.Contains(c.Use, "MODEL"):
		return "arg"
	}
	return ""
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(""), &o, &e, func(string) string { return "" })
	return code, o.String(), e.String()
}

// oneLine checks the error contract: one line on stderr, starting with
// "gpucalc: ", with one pointer ("(see '...')") exactly for usage errors:
// to --help, or where the message points somewhere better, there.
func oneLine(t *testing.T, what string, code, want int, stderr string) {
	t.Helper()
	if code != want {
		t.Errorf("%s: exit %d, want %d (stderr %q)", what, code, want, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "gpucalc: ") {
		t.Errorf("%s: stderr is not one line starting with \"gpucalc: \": %q", what, stderr)
	}
	if hint := strings.Contains(stderr, "--help')"); hint && want != exitUsage {
		t.Errorf("%s: help hint on an exit-%d error: %q", what, want, stderr)
	}
	if n := strings.Count(stderr, "(see '"); want == exitUsage && n != 1 || want != exitUsage && n > 1 {
		t.Errorf("%s: %d pointers (see '...') on an exit-%d error; want one per usage error, at most one otherwise: %q", what, n, want, stderr)
	}
	for _, leak := range []string{"goroutine ", "panic", "strconv.", "[]struct", "*errors."} {
		if strings.Contains(stderr, leak) {
			t.Errorf("%s: stderr leaks %q: %q", what, leak, stderr)
		}
	}
}

// TestExitCodes checks every command against the error classes: a bad flag,
// a bad --format and an empty --device are usage errors (exit 2); a file
// that does not exist is a failure (exit 1). Each is one line on stderr.
func TestExitCodes(t *testing.T) {
	f := &factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	root := newCmdRoot(f)
	for _, path := range leafCommands() {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runCLI(append(path, "--no-such-flag")...)
			oneLine(t, "unknown flag", code, exitUsage, stderr)
			if out != "" {
				t.Errorf("unknown flag: wrote to stdout: %q", out)
			}
			// Arguments a command does not take, and none where it needs
			// one, read like the other usage errors, not cobra's "accepts 1
			// arg(s), received 0".
			// A command that reads several files ('trace FILE [FILE...]')
			// takes them as files: a missing one is a failure.
			code, _, stderr = runCLI(append(path, "x", "y")...)
			if strings.Contains(c.Use, "[FILE...]") {
				oneLine(t, "two missing files", code, exitFailure, stderr)
			} else {
				oneLine(t, "two stray arguments", code, exitUsage, stderr)
			}
			if strings.Contains(stderr, "arg(s)") {
				t.Errorf("two stray arguments: cobra's wording: %q", stderr)
			}
			if _, ok := c.Annotations[annotationNoResults]; !ok {
				if code, _, stderr = runCLI(path...); code != exitOK && strings.Contains(stderr, "arg(s)") {
					t.Errorf("no arguments: cobra's wording: %q", stderr)
				}
			}
			// A missing input file, where the command reads one; else the
			// command's own valid minimum.
			var base []string
			switch takesFile(c) {
			case "--input", "--workload":
				base = append(append([]string(nil), path...), takesFile(c), "no-such-file.csv")
				code, _, stderr = runCLI(base...)
				oneLine(t, "missing --input file", code, exitFailure, stderr)
				if !strings.Contains(stderr, "no-such-file.csv: no such file") {
					t.Errorf("missing file: %q does not name the file", stderr)
				}
			case "arg":
				base = append(append([]string(nil), path...), "no-such-file.yaml")
				code, _, stderr = runCLI(base...)
				oneLine(t, "missing file argument", code, exitFailure, stderr)
				if !strings.Contains(stderr, "no-such-file.yaml") {
					t.Errorf("missing file: %q does not name the file", stderr)
				}
			}
			if c.Flags().Lookup("format") != nil || c.InheritedFlags().Lookup("format") != nil {
				code, _, stderr = runCLI(append(append([]string(nil), path...), "--format", "yaml")...)
				oneLine(t, "bad --format", code, exitUsage, stderr)
			}
			if c.Flags().Lookup("device") != nil {
				code, _, stderr = runCLI(append(append([]string(nil), path...), "--device", "")...)
				oneLine(t, "empty --device", code, exitUsage, stderr)
				code, _, stderr = runCLI(append(append([]string(nil), path...), "--device", "h900")...)
				oneLine(t, "unknown --device", code, exitUsage, stderr)
			}
			if c.Flags().Lookup("devices") != nil {
				for _, v := range []string{",", "h100,h100", "h100,"} {
					code, _, stderr = runCLI(append(append([]string(nil), path...), "--devices", v)...)
					oneLine(t, "--devices "+v, code, exitUsage, stderr)
				}
				code, _, stderr = runCLI(append(append([]string(nil), path...), "--device", "h100", "--devices", "a100")...)
				oneLine(t, "--device with --devices", code, exitUsage, stderr)
			}
		})
	}
}

// TestDeviceFlags checks the one rule for --device and --devices through
// the options a command receives, without running it.
func TestDeviceFlags(t *testing.T) {
	cases := []struct {
		args    []string
		env     string
		want    []string
		origin  string
		wantErr string
	}{
		{nil, "", []string{"H100 SXM"}, "default; set --device or GPUCALC_DEVICE", ""},
		{nil, "a100", []string{"A100 SXM4 80GB"}, "from GPUCALC_DEVICE", ""},
		{[]string{"--device", "h200"}, "a100", []string{"H200 SXM"}, "", ""},
		{[]string{"--devices", "h100,A100 SXM4 80GB,l40s"}, "", []string{"H100 SXM", "A100 SXM4 80GB", "L40S"}, "", ""},
		{[]string{"--devices", "h100,h100-sxm"}, "", nil, "", "names H100 SXM twice"},
		{[]string{"--devices", ","}, "", nil, "", "an empty name"},
		{[]string{"--device", ""}, "", nil, "", "--device '': empty"},
		{[]string{"--device", "h100", "--devices", "a100"}, "", nil, "", "not both"},
		{nil, "h900", nil, "", "from GPUCALC_DEVICE: unknown device"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			f := &factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
				Getenv: func(k string) string {
					if k == "GPUCALC_DEVICE" {
						return c.env
					}
					return ""
				}}
			var got *checkOptions
			cmd := newCmdCheck(f, func(o *checkOptions) error { got = o; return nil })
			cmd.SetArgs(append([]string{"w.yaml"}, c.args...))
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if got.workload != "w.yaml" {
				t.Errorf("workload %q", got.workload)
			}
			ts, err := f.Devices(got.devices)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range ts {
				names = append(names, d.Name)
			}
			if strings.Join(names, "|") != strings.Join(c.want, "|") || ts[0].Origin != c.origin {
				t.Errorf("devices %v (origin %q), want %v (%q)", names, ts[0].Origin, c.want, c.origin)
			}
		})
	}
}
