package main

import (
	"fmt"
	"strconv"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

// chartOptions are --plot, --size and --dpi, the same on every command
// that draws a chart.
type chartOptions struct {
	file, size string
	dpi        int
}

// addChartFlags adds --plot (drawing what), --size (default def) and --dpi.
func addChartFlags(cmd *cobra.Command, o *chartOptions, what string, def chart.Size) {
	cmd.Flags().StringVar(&o.file, "plot", "", "also draw "+what+" to `FILE`.png, FILE.svg or FILE.pdf")
	size := strconv.FormatFloat(def.Width, 'g', -1, 64) + "x" + strconv.FormatFloat(def.Height, 'g', -1, 64) + "cm"
	cmd.Flags().StringVar(&o.size, "size", size, "chart `size`, WIDTHxHEIGHT in cm, mm or in")
	cmd.Flags().IntVar(&o.dpi, "dpi", chart.DefaultDPI, "PNG chart resolution in dots per inch (10 to 1200; at most 100 megapixels)")
	_ = cmd.MarkFlagFilename("plot", "png", "svg", "pdf")
}

// check validates the chart flags before any work is done: the file's
// format, the size, the dpi and the pixel cap are usage errors.
func (o chartOptions) check() (chart.Options, error) {
	if o.file == "" {
		return chart.Options{}, nil
	}
	var opt chart.Options
	var err error
	if opt.Format, err = chart.FileFormat(o.file); err != nil {
		return opt, usageError{fmt.Errorf("--plot: %w", err)}
	}
	if opt.Size, err = chart.ParseSize(o.size); err != nil {
		return opt, usageError{fmt.Errorf("--size: %w", err)}
	}
	opt.DPI = o.dpi
	if err := opt.Check(); err != nil {
		return opt, usageError{fmt.Errorf("--size %s --dpi %d: %w", o.size, o.dpi, err)}
	}
	return opt, nil
}

// write draws the chart to the --plot file and returns the notes to print:
// where it went, and for a roofline the ops it could not place.
func (o chartOptions) write(c chart.Chart, opt chart.Options) ([]string, error) {
	if err := chart.WriteFile(o.file, c, opt); err != nil {
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

// chartNotes adds chart notes under the first table, or writes them to
// stderr for CSV and JSON, which must stay machine-readable.
func (f *factory) chartNotes(form reports.Format, tables []reports.Table, notes []string) {
	if len(notes) == 0 {
		return
	}
	if (form == reports.FormatTable || form == reports.FormatMarkdown) && len(tables) > 0 {
		tables[0].Notes = append(tables[0].Notes, notes...)
		return
	}
	for _, n := range notes {
		fmt.Fprintln(f.ErrOut, "gpucalc: "+n)
	}
}
