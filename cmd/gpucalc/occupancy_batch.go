package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type occupancyBatchOptions struct {
	f         *factory
	input     string
	formatSet bool
}

func newCmdOccupancyBatch(f *factory, runF func(*occupancyBatchOptions) error) *cobra.Command {
	opts := &occupancyBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Occupancy for every row of a CSV file",
		Long: `Read CSV with the header device,threads,regs,static_smem,dynamic_smem,carveout
and optionally max_threads,barriers (any order). device is a catalog name or an
architecture (sm_90, 9.0); sizes as --smem takes them (binary: 48K, 48KiB or
49152); carveout is empty or -1 for the
default, else a percentage 0..100. Write the input columns, then
blocks_per_sm,warps_per_sm,occupancy,limiters,blocks_by_warps,blocks_by_regs,
blocks_by_smem,blocks_by_blocks,regs_per_block,smem_per_block,error.
limiters joins the tied limits with "|"; an unlimited per-limit count is empty;
a bad row gets its message in error and the batch goes on. Output is CSV unless
--format says otherwise.

Every input row gives one output row, in order. The exit status is 0 when
every row was calculated, 1 when any row failed or the input could not be read
to its end (an unclosed quote, a line over 1 MiB, binary data: the message
names the line) or has no rows.`,
		Example: `  gpucalc occupancy batch --input configs.csv > out.csv
  printf 'device,threads,regs,static_smem,dynamic_smem,carveout\nsm_90,256,64,0,48K,\n' |
    gpucalc occupancy batch --input -`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.formatSet = cmd.Flags().Changed("format")
			return execute(opts, runF, occupancyBatchRun)
		},
	}
	f.addInputFlag(cmd, &opts.input)
	return cmd
}

func occupancyBatchRun(opts *occupancyBatchOptions) error {
	f := opts.f
	format := reports.FormatCSV
	if opts.formatSet {
		var err error
		if format, err = f.OutFormat(nil); err != nil {
			return err
		}
	}
	in, name, err := f.Open(opts.input)
	if err != nil {
		return err
	}
	defer in.Close()
	c, err := f.Catalog()
	if err != nil {
		return err
	}
	row, done := f.rowProgress("occupancy batch")
	defer done()
	batch := func(out io.Writer, form reports.Format, width int) error {
		return runBatch(in, out, form, width, c.Limits, row)
	}
	if err := f.Output(format, nil, nil, stream(batch), nil, nil); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// runBatch streams the batch from in to out: occupancy's reader and loop,
// reports' writer, and the closing message.
func runBatch(in io.Reader, out io.Writer, format reports.Format, width int, lookup func(string) (devices.Arch, error), progress func(rows int)) error {
	br, err := occupancy.NewBatchReader(in, lookup)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	w, err := reports.NewOccupancyBatch(bw, format, width, br.Header)
	if err != nil {
		return err
	}
	n, err := occupancy.RunBatch(br, w, progress)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if n.Rows == 0 && n.ReadErr == nil {
		return errors.New("batch input has a header but no rows")
	}
	return batchFailures(n.Failed, n.Rows, n.ReadErr)
}
