package main

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

func (a *app) newDevicesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the GPUs in the catalog",
		Long: `List the GPUs in the catalog with their headline figures. Peaks are dense
(no 2:4 sparsity); bandwidth is decimal (TB/s = 1e12 B/s), memory sizes binary
(GiB). The ridge point is the dense BF16 tensor peak (FP16 on parts without
BF16) divided by DRAM bandwidth, in FLOP per byte.

Device files (--device-file, repeatable, and every *.yaml in the directory
$GPUCALC_DEVICES) add GPUs or override fields of a catalog entry by name; the
README documents the schema.`,
		Example: `  gpucalc devices
  gpucalc devices --format markdown
  gpucalc devices --device-file my-h100.yaml
  GPUCALC_DEVICES=~/.config/gpucalc/devices gpucalc devices`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.outFormat(nil)
			if err != nil {
				return err
			}
			c, err := a.Catalog()
			if err != nil {
				return err
			}
			list := c.Devices()
			if f == reports.FormatJSON {
				return reports.JSON(a.stdout, list)
			}
			return reports.Render(a.stdout, f, reports.DeviceList(list))
		},
	}
	cmd.AddCommand(a.newDevicesShowCmd(), a.newDevicesArchsCmd())
	return cmd
}

func (a *app) newDevicesShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show every figure of one GPU, with its source",
		Long: `Show every figure the catalog holds for one GPU, each with a key to the source
it comes from (listed under the table; JSON and CSV carry the full text), and
the occupancy limits of its compute capability. NAME is a catalog name or
alias, case-insensitive, or the name nvidia-smi prints. An architecture
(sm_90, 9.0) shows its occupancy limits alone.`,
		Example: `  gpucalc devices show h100
  gpucalc devices show "NVIDIA H100 80GB HBM3" --format json
  gpucalc devices show sm_89`,
		Args:              args(cobra.ExactArgs(1)),
		ValidArgsFunction: a.completeDevices,
		RunE: func(cmd *cobra.Command, argv []string) error {
			f, err := a.outFormat(nil)
			if err != nil {
				return err
			}
			d, _, err := a.Device(argv[0])
			if err != nil {
				// Not a device; an architecture shows its limits.
				if cc, ccErr := devices.ParseCC(argv[0]); ccErr == nil {
					if _, archErr := devices.ArchFor(cc); archErr == nil {
						return a.showArch(f, cc)
					}
				}
				return err
			}
			lim, limErr := d.Limits()
			if f == reports.FormatJSON {
				out := struct {
					devices.Device
					Limits *devices.Arch `json:"limits,omitempty"`
				}{Device: d}
				if limErr == nil {
					out.Limits = &lim
				}
				return reports.JSON(a.stdout, out)
			}
			tables := []reports.Table{reports.DeviceDetail(d, f == reports.FormatCSV)}
			if limErr == nil && f != reports.FormatCSV {
				tables = append(tables, reports.ArchLimits(lim))
			}
			return reports.Render(a.stdout, f, tables...)
		},
	}
}

func (a *app) newDevicesArchsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "archs [CC]",
		Short: "List the occupancy limits of every compute capability",
		Long: `List the per-compute-capability limits that occupancy depends on: warps,
threads and blocks per SM, registers, shared memory (binary sizes, as CUDA
reports them). With CC (9.0, 90, sm_90, sm_100a), show that one in full:
allocation units, carveouts, barriers and cluster sizes too.`,
		Example: `  gpucalc devices archs
  gpucalc devices archs sm_90
  gpucalc devices archs 8.9 --format json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			f, err := a.outFormat(nil)
			if err != nil {
				return err
			}
			if len(argv) == 1 {
				cc, err := devices.ParseCC(argv[0])
				if err != nil {
					return usageError{err}
				}
				return a.showArch(f, cc)
			}
			list := devices.Archs()
			if f == reports.FormatJSON {
				return reports.JSON(a.stdout, list)
			}
			return reports.Render(a.stdout, f, reports.ArchList(list))
		},
	}
}

// showArch prints the occupancy limits of one compute capability.
func (a *app) showArch(f reports.Format, cc devices.CC) error {
	lim, err := devices.ArchFor(cc)
	if err != nil {
		return usageError{err}
	}
	if f == reports.FormatJSON {
		return reports.JSON(a.stdout, lim)
	}
	return reports.Render(a.stdout, f, reports.ArchLimits(lim))
}
