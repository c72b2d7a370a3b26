package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/review"
	"github.com/spf13/cobra"
)

type checkOptions struct {
	device  string
	devices []string
	failOn  string
}

func (a *app) newCheckCmd() *cobra.Command {
	var opt checkOptions
	cmd := &cobra.Command{
		Use:   "check WORKLOAD.yaml",
		Short: "Design-review checks of a workload on a device",
		Long: `Review a workload (a YAML list of ops, such as one transformer layer) on a
device: each op's bound, lower-bound and expected time and share of the total,
then findings, each with a severity, the numbers behind it and the fix:

  fusion             memory-bound elementwise ops and norms standing alone after
                     a producer: the bytes and time a fused epilogue saves
  gemm_alignment     GEMM dimensions that are not multiples of 16 bytes (on an
                     H100, bf16 4095³ ran 4.7× slower than 4096³)
  wave_quantization  GEMM tiles against SMs: the idle share of edge tiles and
                     of the last wave
  launch_overhead    ops so small that the launch costs more than their work
  low_utilization    the workload's share of time below 10% of the compute peak
  memory_capacity    working sets beyond device memory (memory: in the file)
  host_transfer      data crossing the host link (transfers: in the file)
  device_peaks       device peaks that look 2:4-sparse, or break
                     peak = SMs × clock × rate per SM
  occupancy, spills, low_occupancy, coalescing, bank_conflicts
                     kernels the file describes (kernel: under an op)

Severities: error (cannot run as described, or a number is wrong), warning
(the fix saves at least 1% of the expected time, or a kernel misses its
hardware's limits), info. Times are seconds per run of the workload; sizes
binary (MiB), rates decimal (TB/s).

--format html writes one self-contained page (inline SVG charts, no network).
--fail-on error|warning exits with status 1 when a finding of that severity (or
worse) is found, for CI.

` + ops.WorkloadSchema + `

` + ops.DesignSchema + `

` + ops.SpecHelp,
		Example: `  gpucalc check examples/llama3-8b-decode.yaml
  gpucalc check examples/llama3-8b-prefill.yaml --device h100 --format markdown
  gpucalc check examples/resnet50-bottleneck.yaml --devices h100,a100,l40s
  gpucalc check block.yaml --format html > review.html
  gpucalc check block.yaml --fail-on error`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			f, err := a.outFormat([]reports.Format{reports.FormatTable, reports.FormatMarkdown, reports.FormatJSON, reports.FormatCSV, reports.FormatHTML})
			if err != nil {
				return err
			}
			fail, err := failSeverity(opt.failOn)
			if err != nil {
				return err
			}
			w, err := a.readWorkload(argv[0])
			if err != nil {
				return err
			}
			devs, origin, err := a.checkDevices(opt)
			if err != nil {
				return err
			}
			builtin, err := devices.Builtin()
			if err != nil {
				return err
			}
			rv := reports.Review{Origin: origin}
			for _, d := range devs {
				r, err := review.Check(w, d, builtin.Devices())
				if err != nil {
					return err
				}
				rv.Reports = append(rv.Reports, r)
			}
			switch f {
			case reports.FormatJSON:
				err = reports.JSON(a.stdout, rv)
			case reports.FormatHTML:
				err = reports.ReviewHTML(a.stdout, rv)
			default:
				err = reports.Render(a.stdout, f, reports.ReviewTables(rv, f)...)
			}
			if err != nil {
				return err
			}
			return failed(rv, fail)
		},
	}
	a.addDeviceFlag(cmd, &opt.device)
	a.addDevicesFlag(cmd, &opt.devices, "review on several devices, comma-separated `names` (instead of --device)")
	cmd.Flags().StringVar(&opt.failOn, "fail-on", "", "exit 1 when a finding of this `severity` or worse is found: error or warning")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// readWorkload reads and parses a workload file; - is standard input. A
// file that cannot be read is a failure; one that does not parse is bad
// input (usage).
func (a *app) readWorkload(name string) (ops.Workload, error) {
	r := a.stdin
	if name == "-" {
		name = "standard input"
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return ops.Workload{}, fmt.Errorf("workload: %w", err)
		}
		defer fh.Close()
		r = fh
	}
	w, err := ops.ReadWorkload(name, r)
	if err != nil {
		return ops.Workload{}, usageError{err}
	}
	return w, nil
}

// checkDevices resolves --device or --devices.
func (a *app) checkDevices(opt checkOptions) ([]devices.Device, string, error) {
	if len(opt.devices) == 0 {
		d, origin, err := a.Device(opt.device)
		return []devices.Device{d}, origin, err
	}
	if opt.device != "" {
		return nil, "", usageError{errors.New("give --device or --devices, not both")}
	}
	out, err := a.Devices(opt.devices)
	return out, "", err
}

func failSeverity(s string) (review.Severity, error) {
	switch s {
	case "":
		return "", nil
	case string(review.Error), string(review.Warning):
		return review.Severity(s), nil
	}
	return "", usageError{fmt.Errorf("--fail-on %q: expected error or warning", s)}
}

// failed returns an error when a report has a finding at severity fail or
// worse.
func failed(rv reports.Review, fail review.Severity) error {
	if fail == "" {
		return nil
	}
	n := 0
	for _, r := range rv.Reports {
		n += r.Count(review.Error)
		if fail == review.Warning {
			n += r.Count(review.Warning)
		}
	}
	if n > 0 {
		return fmt.Errorf("check failed: %d finding(s) of severity %s or worse", n, fail)
	}
	return nil
}
