package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/rows"
	"github.com/spf13/cobra"
)

// defaultDevice is used when neither --device nor GPUCALC_DEVICE names one.
const defaultDevice = "H100 SXM"

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in how gpucalc was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// app holds what every command shares: streams, environment and the global
// flags. Commands read them through it rather than through globals.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	format      string
	deviceFiles []string
	datasheet   bool

	catalog *devices.Catalog
}

// run builds the command tree, runs it with args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root := a.newRootCmd()
	started := false
	wrapRunE(root, &started)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ue usageError
	if !started || errors.As(err, &ue) {
		fmt.Fprintf(stderr, "gpucalc: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
		return exitUsage
	}
	fmt.Fprintf(stderr, "gpucalc: %v\n", err)
	return exitFailure
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

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func (a *app) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "gpucalc",
		Short: "GPU occupancy, roofline and latency-hiding calculator",
		Long: `gpucalc answers the questions GPU engineers ask before and after writing a kernel:
how many blocks fit on an SM and what limits them (occupancy), whether an op is
memory- or compute-bound and how fast it can run (roofline), and why (a simulated
kernel run that shows latency hiding).

Units: memory sizes are binary (48K = 48 KiB = 49152 bytes, as in CUDA);
rates are decimal (3.35TB/s = 3.35e12 B/s, 989T = 989e12 FLOP/s).
Peak rates are dense; 2:4-sparse rates are never used unless asked for.`,
		Example: `  gpucalc occupancy --regs 64 --smem 48K
  gpucalc devices
  gpucalc devices show h100`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&a.format, "format", "f", "table", "output `format`: table, markdown, json or csv")
	root.PersistentFlags().StringArrayVar(&a.deviceFiles, "device-file", nil, "YAML device `file` that adds devices or overrides catalog fields (repeatable; also every *.yaml in $GPUCALC_DEVICES)")
	root.PersistentFlags().BoolVar(&a.datasheet, "datasheet", false, "ignore measured ceilings (the catalog's measured H100/H200 figures and device files' measured: sections); use datasheet figures only")
	_ = root.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "markdown", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.MarkPersistentFlagFilename("device-file", "yaml", "yml")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{flagError(err)} })
	root.AddCommand(
		a.newDevicesCmd(),
		a.newOccupancyCmd(),
		a.newRooflineCmd(),
		a.newSimulateCmd(),
		a.newNCUCmd(),
		a.newCheckCmd(),
	)
	return root
}

// outFormat parses --format against the formats a command supports (nil:
// table, markdown, json, csv).
func (a *app) outFormat(allowed []reports.Format) (reports.Format, error) {
	f, err := reports.ParseFormat(a.format, allowed)
	if err != nil {
		return "", usageError{err}
	}
	return f, nil
}

// Catalog returns the built-in catalog with the user's device files applied:
// first every *.yaml in $GPUCALC_DEVICES (sorted), then each --device-file.
func (a *app) Catalog() (*devices.Catalog, error) {
	if a.catalog != nil {
		return a.catalog, nil
	}
	c, err := devices.Builtin()
	if err != nil {
		return nil, err
	}
	var files []string
	if dir := a.getenv("GPUCALC_DEVICES"); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("GPUCALC_DEVICES=%s: not a directory; set it to a folder of device YAML files, or unset it", dir)
		}
		matches, err := filepath.Glob(filepath.Join(dir, "*.y*ml"))
		if err != nil {
			return nil, fmt.Errorf("GPUCALC_DEVICES=%s: %w", dir, err)
		}
		sort.Strings(matches)
		files = append(files, matches...)
	}
	files = append(files, a.deviceFiles...)
	for _, f := range files {
		data, err := readDeviceFile(f)
		if err != nil {
			return nil, fmt.Errorf("device file: %w", err)
		}
		if c, err = c.With(f, data); err != nil {
			return nil, err
		}
	}
	a.catalog = c
	return c, nil
}

// readDeviceFile reads a device file, at most 1 MiB (a real one is a few
// KiB).
func readDeviceFile(name string) ([]byte, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := rows.ReadAll(fh, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// deviceName returns the device to use: the flag, else $GPUCALC_DEVICE, else
// the default; the second result says where it came from, for output.
func (a *app) deviceName(flag string) (name, origin string) {
	if flag != "" {
		return flag, ""
	}
	if env := a.getenv("GPUCALC_DEVICE"); env != "" {
		return env, "from GPUCALC_DEVICE"
	}
	return defaultDevice, "default; set --device or GPUCALC_DEVICE"
}

// Device looks up a device by the flag's value (see deviceName).
func (a *app) Device(flag string) (devices.Device, string, error) {
	c, err := a.Catalog()
	if err != nil {
		return devices.Device{}, "", err
	}
	name, origin := a.deviceName(flag)
	d, err := c.Lookup(name)
	if err != nil {
		return devices.Device{}, "", usageError{err}
	}
	if a.datasheet {
		d = d.Datasheet()
	}
	return d, origin, nil
}

// completeDevices completes device names for flags and arguments.
func (a *app) completeDevices(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := a.Catalog()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, d := range c.Devices() {
		alias := d.Name
		if len(d.Aliases) > 0 {
			alias = d.Aliases[0]
		}
		if strings.HasPrefix(strings.ToLower(alias), strings.ToLower(toComplete)) {
			out = append(out, cobra.CompletionWithDesc(alias, d.Vendor+" "+d.Name))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// addDeviceFlag adds --device with completion.
func (a *app) addDeviceFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().VarP(deviceValue{p}, "device", "d", "GPU `name` or alias from 'gpucalc devices' (default $GPUCALC_DEVICE, else "+defaultDevice+")")
	_ = cmd.RegisterFlagCompletionFunc("device", a.completeDevices)
}

// args validates positional arguments as a usage error.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// batchFailures is a batch command's closing error: the reading error that
// cut the input short, else how many rows failed (their messages are in the
// output's error column), else nil.
func batchFailures(failed, rows int, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("%w (the %d rows before it are written)", readErr, rows)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d rows failed; see the error column", failed, rows)
	}
	return nil
}

// flagError rewrites the flag parser's number and boolean errors, which
// quote strconv ("strconv.ParseInt: parsing "abc": invalid syntax"), into
// what the flag takes.
func flagError(err error) error {
	msg := err.Error()
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
