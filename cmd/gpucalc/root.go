package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/gpucalc/gpucalc/escape"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/spf13/cobra"
)

// run builds the command tree, runs it with args and returns the exit code.
// Every error is one line on stderr; usage errors (exit 2) end with one
// pointer: to the command's --help, unless the message has its own.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return runFactory(newFactory(stdin, stdout, stderr, getenv), args)
}

// runFactory runs the command tree over f's streams; tests that set what
// run decides at the edge (the terminal's width) call it directly.
func runFactory(f *factory, args []string) int {
	stdin, stdout, stderr := f.In, f.Out, f.ErrOut
	root := newCmdRoot(f)
	started := false
	wrapRunE(root, &started)
	onceFlags(root)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	// An error may quote its input (a kernel's name, a line of a file):
	// printed, never obeyed by the terminal.
	msg := escape.Terminal(strings.ReplaceAll(err.Error(), "\n", " ")) + dtypeHint(cmd, err)
	var ue usageError
	if !started || errors.As(err, &ue) {
		// One pointer per line: the message's own (an unknown device
		// points at 'gpucalc devices'), else the command's --help.
		if !strings.HasSuffix(msg, ")") || !strings.Contains(msg, "(see '") {
			msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
		}
		fmt.Fprintf(stderr, "gpucalc: %s\n", msg)
		return exitUsage
	}
	fmt.Fprintf(stderr, "gpucalc: %s\n", msg)
	return exitFailure
}

// dtypeHint names how cmd sets the type an UnsupportedError suggests, by
// what cmd has: its --dtype flag, else the op spec's dtype field; a command
// with neither (train prices bf16) gets no hint, so advice never names a
// flag the command lacks.
func dtypeHint(cmd *cobra.Command, err error) string {
	var ue *roofline.UnsupportedError
	if cmd == nil || !errors.As(err, &ue) || ue.Suggest == "" {
		return ""
	}
	switch {
	case cmd.Flags().Lookup("dtype") != nil:
		return fmt.Sprintf(" (--dtype %s)", ue.Suggest)
	case cmd.Flags().Changed("model"):
		return "" // check --model prices the config's own types
	case cmd.Flags().Lookup("op") != nil || cmd.Flags().Lookup("workload") != nil || cmd.Name() == "check":
		return fmt.Sprintf(" (dtype=%s in the op spec)", ue.Suggest)
	case cmd.Flags().Lookup("precision") != nil:
		return fmt.Sprintf(" in a framework of your own: training here is priced in bf16 only, no flag sets %s", ue.Suggest)
	}
	return ""
}

// wrapRunE records that a command got as far as running: errors before that
// (flags, arguments, unknown commands) are usage errors.
func wrapRunE(c *cobra.Command, started *bool) {
	if c.RunE != nil {
		f := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*started = true
			return f(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		wrapRunE(sub, started)
	}
}

// helpWidth is the widest line --help prints.
const helpWidth = 100

// wrapHelp breaks each line of s longer than width after its last space or
// comma that fits, the rest indented as the line was.
func wrapHelp(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		for utf8.RuneCountInString(line) > width {
			cut := -1
			for i, r := range line {
				if utf8.RuneCountInString(line[:i]) >= width {
					break
				}
				if (r == ' ' || r == ',') && i > len(indent) {
					cut = i
				}
			}
			if cut < 0 {
				break
			}
			if line[cut] == ',' {
				cut++
			}
			out = append(out, strings.TrimRight(line[:cut], " "))
			line = indent + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func newCmdRoot(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "gpucalc",
		Short: "GPU occupancy, roofline and latency-hiding calculator",
		Long: `gpucalc answers the questions GPU engineers ask before and after writing a kernel
or deploying a model: how many blocks fit on an SM and what limits them
(occupancy, as CUDA computes it), whether an op is memory- or compute-bound and
how fast it can run (roofline), why (a simulated kernel run), what an LLM needs
and how fast it runs from its config.json (model), where a profiled step loses
time (ncu, trace), and what to fix (check). 'gpucalc serve' puts the
calculators in a browser; 'gpucalc version' says what this binary was built
from.

Units: memory sizes are binary (48K = 48 KiB = 49152 bytes, as in CUDA);
rates are decimal (3.35TB/s = 3.35e12 B/s, 989T = 989e12 FLOP/s).
Peak rates are dense; 2:4-sparse rates are never used unless asked for.
Exit status: 0 success, 1 failure, 2 usage error.`,
		Example: `  gpucalc occupancy --regs 64 --smem 48K
  gpucalc roofline --op "matmul m=4096 n=4096 k=4096 dtype=bf16"
  gpucalc model llama-3.1-70b --device h100 --tp 4 --batch 32 --ctx 8192
  gpucalc trace profile.json.gz
  gpucalc check examples/llama3-8b-decode.yaml --format html > review.html
  gpucalc serve --open`,
		Version:       buildVersion(debug.ReadBuildInfo()).String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&f.format, "format", "f", "table", "output `format`: table, markdown, json or csv")
	root.PersistentFlags().StringArrayVar(&f.deviceFiles, "device-file", nil, "YAML device `file` that adds devices or overrides catalog fields (repeatable; also every *.yaml in $GPUCALC_DEVICES)")
	root.PersistentFlags().BoolVar(&f.datasheet, "datasheet", false, "ignore measured ceilings (the catalog's measured H100/H200 figures and device files' measured: sections); use datasheet figures only")
	_ = root.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "markdown", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.MarkPersistentFlagFilename("device-file", "yaml", "yml")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{flagError(err)} })
	root.PersistentFlags().BoolVar(&f.wide, "wide", false, "on a terminal, print full tables however wide (pipes and files always get them)")
	root.PersistentFlags().BoolVarP(&f.verbose, "verbose", "v", false, "also print provenance: how each figure was measured and its sources")
	// Flag descriptions wrap to helpWidth, as the rest of the help is
	// written (they ran to 242 columns).
	cobra.AddTemplateFunc("wrappedFlagUsages", func(fs interface{ FlagUsagesWrapped(int) string }) string {
		return fs.FlagUsagesWrapped(helpWidth)
	})
	root.SetUsageTemplate(strings.NewReplacer(".LocalFlags.FlagUsages", "wrappedFlagUsages .LocalFlags",
		".InheritedFlags.FlagUsages", "wrappedFlagUsages .InheritedFlags").Replace(root.UsageTemplate()))
	// Long texts hold generated lists (columns, model types) that grow:
	// their long lines wrap too.
	cobra.AddTemplateFunc("wrapHelp", func(s string) string { return wrapHelp(s, helpWidth) })
	root.SetHelpTemplate(strings.Replace(root.HelpTemplate(), "{{. | trimTrailingWhitespaces}}", "{{wrapHelp . | trimTrailingWhitespaces}}", 1))
	root.AddCommand(
		newCmdDevices(f, nil),
		newCmdOccupancy(f, nil),
		newCmdRoofline(f, nil),
		newCmdSimulate(f, nil),
		newCmdNCU(f, nil),
		newCmdTrace(f, nil),
		newCmdCheck(f, nil),
		newCmdModel(f, nil),
		newCmdTrain(f, nil),
		newCmdDeploy(f, nil),
		newCmdServe(f, nil),
		newCmdVersion(f, nil),
	)
	return root
}

// flagError rewrites the flag parser's number and boolean errors, which
// quote strconv ("strconv.ParseInt: parsing "abc": invalid syntax"), into
// what the flag takes.
func flagError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, " flag: --"); i >= 0 && strings.Contains(msg[i:], repeated) {
		return errors.New(msg[i+len(" flag: "):])
	}
	i := strings.Index(msg, ": strconv.Parse")
	if i < 0 {
		return err
	}
	want := "a whole number"
	switch {
	case strings.HasPrefix(msg[i:], ": strconv.ParseFloat"):
		want = "a number"
	case strings.HasPrefix(msg[i:], ": strconv.ParseBool"):
		want = "true or false"
	case strings.HasPrefix(msg[i:], ": strconv.ParseUint"):
		want = "a whole number, 0 or more"
	}
	if strings.HasSuffix(msg, "value out of range") {
		want += " (this one is too large)"
	}
	return fmt.Errorf("%s: expected %s", strings.Replace(msg[:i], " flag", "", 1), want)
}
