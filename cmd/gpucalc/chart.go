package main

import (
	"fmt"
	"os"

	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

// chartOptions are --plot, --size and --dpi.
type chartOptions struct {
	file, size string
	dpi        int
}

func addChartFlags(cmd *cobra.Command, o *chartOptions) {
	cmd.Flags().StringVar(&o.file, "plot", "", "also draw a roofline chart to `FILE`.png or FILE.svg")
	cmd.Flags().StringVar(&o.size, "size", "16x10cm", "chart `size`, WIDTHxHEIGHT in cm, mm or in")
	cmd.Flags().IntVar(&o.dpi, "dpi", reports.DefaultDPI, "PNG chart resolution in dots per inch")
	_ = cmd.MarkFlagFilename("plot", "png", "svg")
}

// check validates the chart flags before any work is done.
func (o chartOptions) check() (format string, size reports.ChartSize, err error) {
	if o.file == "" {
		return "", size, nil
	}
	if format, err = reports.ChartFormat(o.file); err != nil {
		return "", size, usageError{err}
	}
	if size, err = reports.ParseChartSize(o.size); err != nil {
		return "", size, usageError{err}
	}
	if o.dpi < 10 || o.dpi > 1200 {
		return "", size, usageError{fmt.Errorf("--dpi %d: expected 10 to 1200", o.dpi)}
	}
	return format, size, nil
}

// write draws the chart to the --plot file and returns the notes to print:
// the ops it could not place, with the reason.
func (o chartOptions) write(c reports.RooflineChart, format string, size reports.ChartSize) ([]string, error) {
	fh, err := os.Create(o.file)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	if err := c.Write(fh, format, size, o.dpi); err != nil {
		fh.Close()
		return nil, fmt.Errorf("chart %s: %w", o.file, err)
	}
	if err := fh.Close(); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	notes := []string{"chart written to " + o.file}
	for _, u := range c.Unplaced() {
		notes = append(notes, "not on the chart: "+u)
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
