package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

// The flag groups commands share, each registered by one helper on the
// factory: --device/--devices, --section, --input, and the chart flags.
// A group keeps the command it is on, to tell which of its flags were
// given.

// deviceFlags are --device and, for commands that compare GPUs, --devices.
// One rule for every command: --device names one GPU, --devices several;
// giving both, an empty name or a name twice is a usage error. With
// neither, $GPUCALC_DEVICE or the default is used, and the output says so.
type deviceFlags struct {
	device  string
	devices []string
	multi   bool
	// cmd is the command the flags are registered on: it tells which
	// were given.
	cmd *cobra.Command
}

// addDeviceFlags registers --device (and --devices when multi) with
// completion.
func (f *factory) addDeviceFlags(cmd *cobra.Command, o *deviceFlags, multi bool) {
	o.multi, o.cmd = multi, cmd
	cmd.Flags().StringVarP(&o.device, "device", "d", "", "GPU `name` or alias from 'gpucalc devices' (default $GPUCALC_DEVICE, else "+devices.Default+")")
	_ = cmd.RegisterFlagCompletionFunc("device", f.completeDevices)
	if multi {
		cmd.Flags().StringSliceVar(&o.devices, "devices", nil, "compare several GPUs: comma-separated `names` (instead of --device)")
		_ = cmd.RegisterFlagCompletionFunc("devices", f.completeDevices)
	}
}

// addMeasuredDeviceFlag registers --device for a command that reads
// measurements: the device defaults to the one the input (what) names.
func (f *factory) addMeasuredDeviceFlag(cmd *cobra.Command, o *deviceFlags, what string) {
	f.addDeviceFlags(cmd, o, false)
	cmd.Flags().Lookup("device").Usage = "GPU `name` or alias from 'gpucalc devices' to measure against (default: the GPU the " + what + " names)"
}

// deviceSet and devicesSet say whether --device and --devices were given.
func (o deviceFlags) deviceSet() bool { return o.cmd != nil && o.cmd.Flags().Changed("device") }
func (o deviceFlags) devicesSet() bool {
	return o.multi && o.cmd != nil && o.cmd.Flags().Changed("devices")
}

// sectionFlag is --section of a command whose CSV output has several
// sections (CSV holds one table; JSON holds them all). The first name is
// the default.
type sectionFlag struct {
	name  string
	names []string
	// needs says which flag a section that not every run has needs.
	needs map[string]string
	cmd   *cobra.Command // the command, to tell whether --section was given
}

// addSectionFlag registers --section with completion; names[0] is the
// default.
func (f *factory) addSectionFlag(cmd *cobra.Command, s *sectionFlag, needs map[string]string, names ...string) {
	s.names, s.needs, s.cmd = names, needs, cmd
	cmd.Flags().StringVar(&s.name, "section", names[0], "`section` --format csv writes: "+strings.Join(names, ", ")+" (JSON has every section)")
	_ = cmd.RegisterFlagCompletionFunc("section", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
}

// set says whether --section was given.
func (s *sectionFlag) set() bool { return s != nil && s.cmd != nil && s.cmd.Flags().Changed("section") }

// check validates --section against the format: a name the command has,
// and CSV only.
func (s *sectionFlag) check(form reports.Format) error {
	if !s.set() {
		return nil
	}
	if !slices.Contains(s.names, s.name) {
		return usagef("--section %q: expected one of %s", s.name, strings.Join(s.names, ", "))
	}
	if form != reports.FormatCSV {
		return usagef("--section picks what --format csv writes; the other formats show every section")
	}
	return nil
}

// addInputFlag registers --input, the CSV file a batch command reads.
func (f *factory) addInputFlag(cmd *cobra.Command, input *string) {
	cmd.Flags().StringVarP(input, "input", "i", "", "CSV `file` to read, or - for standard input")
	_ = cmd.MarkFlagRequired("input")
}

// chartFlags are --plot, --size and --dpi, the same on every command that
// draws a chart.
type chartFlags struct {
	file, size string
	dpi        int
	// opt is what check made of the flags.
	opt chart.Options
}

// addChartFlags adds --plot (drawing what), --size (default def) and --dpi.
func (f *factory) addChartFlags(cmd *cobra.Command, o *chartFlags, what string, def chart.Size) {
	cmd.Flags().StringVar(&o.file, "plot", "", "also draw "+what+" to `FILE`.png, FILE.svg or FILE.pdf")
	size := strconv.FormatFloat(def.Width, 'g', -1, 64) + "x" + strconv.FormatFloat(def.Height, 'g', -1, 64) + "cm"
	cmd.Flags().StringVar(&o.size, "size", size, "chart `size`, WIDTHxHEIGHT in cm, mm or in")
	cmd.Flags().IntVar(&o.dpi, "dpi", chart.DefaultDPI, "PNG chart resolution in dots per inch (10 to 1200; at most 100 megapixels)")
	_ = cmd.MarkFlagFilename("plot", "png", "svg", "pdf")
}

// check validates the chart flags before any work is done: the file's
// format, the size, the dpi and the pixel cap are usage errors.
func (o *chartFlags) check() error {
	if o.file == "" {
		return nil
	}
	var err error
	if o.opt.Format, err = chart.FileFormat(o.file); err != nil {
		return usageError{fmt.Errorf("--plot: %w", err)}
	}
	if _, err := chart.TargetMode(o.file); err != nil {
		return usageError{fmt.Errorf("--plot: %w", err)}
	}
	if o.opt.Size, err = chart.ParseSize(o.size); err != nil {
		return usageError{fmt.Errorf("--size: %w", err)}
	}
	o.opt.DPI = o.dpi
	if err := o.opt.Check(); err != nil {
		return usageError{fmt.Errorf("--size %s --dpi %d: %w", o.size, o.dpi, err)}
	}
	return nil
}

// draw writes the chart build makes to the --plot file, when one was
// given, and returns the notes to print: where it went, and for a roofline
// the ops it could not place.
func (o *chartFlags) draw(build func() (chart.Chart, error)) ([]string, error) {
	if o.file == "" {
		return nil, nil
	}
	c, err := build()
	if err != nil {
		return nil, err
	}
	if err := chart.WriteFile(o.file, c, o.opt); err != nil {
		return nil, err
	}
	notes := []string{"chart written to " + o.file}
	if r, ok := c.(chart.Roofline); ok {
		for _, u := range r.Unplaced() {
			notes = append(notes, "not on the chart: "+u)
		}
	}
	return notes, nil
}

// completeDevices completes device names for flags and arguments.
func (f *factory) completeDevices(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := f.Catalog()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	// --devices completes the name after the last comma.
	done, partial := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, partial = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, d := range c.Devices() {
		alias := d.Name
		if len(d.Aliases) > 0 {
			alias = d.Aliases[0]
		}
		if strings.HasPrefix(strings.ToLower(alias), strings.ToLower(partial)) {
			out = append(out, cobra.CompletionWithDesc(done+alias, d.Vendor+" "+d.Name))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
