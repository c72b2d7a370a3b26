package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/units"
	"github.com/spf13/cobra"
)

type occupancyFromBuildOptions struct {
	f                 *factory
	file              string
	threads           int
	launch            []string
	dynamic, carveout string
}

func newCmdOccupancyFromBuild(f *factory, runF func(*occupancyFromBuildOptions) error) *cobra.Command {
	opts := &occupancyFromBuildOptions{f: f}
	cmd := &cobra.Command{
		Use:   "from-build FILE|-",
		Short: "Occupancy of every kernel in ptxas -v or cuobjdump --dump-resource-usage output",
		Long: `Read the resource usage the CUDA tools print and report occupancy for every
kernel, lowest first:
  - nvcc -Xptxas -v (ptxas -v): "Compiling entry function '...' for 'sm_90'",
    "Used 64 registers, used 1 barriers, 1024 bytes smem", stack and spills;
  - cuobjdump --dump-resource-usage: "Function ...:" and "REG:64 STACK:0 SHARED:1024 ...".
The architecture is the log's. cuobjdump's SHARED includes the 1 KiB CUDA
reserves per block for some sm_90+ objects: gpucalc takes it off where every
kernel of an object shows at least 1 KiB, so it is not counted twice. Names
are demangled; spills and local memory are flagged. Block size: --threads for
all, or per kernel with --launch NAME=THREADS (NAME as printed, with or without
template arguments, or the mangled symbol).

A kernel whose entry is cut short or whose figures are impossible is listed
with the reason, and the others are still calculated; the exit status is then
1 (0 when every kernel was calculated).`,
		Example: `  nvcc -arch=sm_90 -Xptxas -v -c kernels.cu 2>&1 | gpucalc occupancy from-build -
  cuobjdump --dump-resource-usage app | gpucalc occupancy from-build - --threads 128
  gpucalc occupancy from-build build.log --launch saxpy=512 --launch block_reduce=128`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			opts.file = argv[0]
			return execute(opts, runF, occupancyFromBuildRun)
		},
	}
	cmd.Flags().IntVarP(&opts.threads, "threads", "t", occupancy.DefaultThreads, "threads per block for kernels without --launch")
	cmd.Flags().StringArrayVar(&opts.launch, "launch", nil, "`NAME=THREADS` block size of one kernel (repeatable)")
	cmd.Flags().StringVar(&opts.dynamic, "dynamic-smem", "0", "dynamic shared memory per block for every kernel (binary: 48K = 49152 bytes)")
	cmd.Flags().StringVar(&opts.carveout, "carveout", "default", "shared-memory carveout preference: default, a percentage (50%) or a size (100K)")
	return cmd
}

func occupancyFromBuildRun(opts *occupancyFromBuildOptions) (runErr error) {
	f := opts.f
	format, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	dyn, err := parseSize("dynamic-smem", opts.dynamic)
	if err != nil {
		return err
	}
	carve, err := parseCarveout(opts.carveout)
	if err != nil {
		return err
	}
	var named []occupancy.NamedBlockSize
	for _, l := range opts.launch {
		name, n, ok := strings.Cut(l, "=")
		t, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err != nil || t < 1 {
			return usagef("--launch %q: expected NAME=THREADS, such as saxpy=256", l)
		}
		named = append(named, occupancy.NamedBlockSize{Name: strings.TrimSpace(name), Threads: t})
	}
	ks, _, err := parseInput(f, opts.file, occupancy.ParseBuildLog)
	if err != nil {
		return err
	}
	threads, from, err := occupancy.BlockSizes(ks, opts.threads, named)
	if err != nil {
		return usageError{fmt.Errorf("--launch: %w", err)}
	}
	var rows []reports.BuildRow
	failed := 0
	for i, k := range ks {
		src := "--threads"
		if from[i] != "" {
			src = "--launch " + from[i]
		}
		row, err := buildRow(k, threads[i], src, dyn, carve)
		if err != nil {
			row = reports.BuildRow{Kernel: k, Threads: threads[i], ThreadsFrom: src, Error: err.Error()}
			failed++
		}
		rows = append(rows, row)
	}
	if failed > 0 {
		defer func() {
			if runErr == nil {
				runErr = fmt.Errorf("%d of %d kernels could not be calculated; the output says why", failed, len(rows))
			}
		}()
	}
	reports.SortBuildRows(rows)
	notes := []string{fmt.Sprintf("Threads per block: %d unless --launch says otherwise; dynamic shared memory %s; carveout %s.", opts.threads, units.FormatSize(int64(dyn)), carve),
		"Static shared memory excludes the 1 KiB CUDA reserves per block (cc 8.0+); the calculation adds it once. Give block sizes with --launch."}
	return f.Output(format, nil, nil, rows,
		func() []reports.Table { return []reports.Table{reports.BuildTable(rows, notes)} },
		func() []reports.Table { return reports.BuildRecords(rows) })
}

// buildRow calculates one kernel of a build log launched with threads (from
// the flag named in from); an error names the log's figure or the flag at
// fault.
func buildRow(k occupancy.BuildKernel, threads int, from string, dyn int, carve occupancy.Carveout) (reports.BuildRow, error) {
	if k.Problem != "" {
		return reports.BuildRow{}, errors.New(k.Problem)
	}
	arch, err := devices.ArchFor(k.CC)
	if err != nil {
		return reports.BuildRow{}, err
	}
	kern := occupancy.Kernel{Regs: k.Regs, StaticSmem: k.StaticSmem, Barriers: k.Barriers}
	l := occupancy.Launch{Threads: threads, DynamicSmem: dyn, Carveout: carve}
	r := occupancy.Calculate(arch, kern, l)
	switch {
	case errors.Is(r.Err, occupancy.ErrBlockSize):
		err = fmt.Errorf("%s %d: a block has 1 to %d threads on cc %s", from, threads, arch.MaxThreadsPerBlock, arch.CC)
	case errors.Is(r.Err, occupancy.ErrRegisters):
		err = fmt.Errorf("the log gives %d registers per thread; cc %s allows at most %d", k.Regs, arch.CC, arch.MaxRegsPerThread)
	case errors.Is(r.Err, occupancy.ErrStaticSmem):
		err = fmt.Errorf("the log gives %s of static shared memory; cc %s allows at most %s per block", units.FormatSize(int64(k.StaticSmem)), arch.CC, units.FormatSize(int64(arch.SmemPerBlock)))
	case errors.Is(r.Err, occupancy.ErrBarriers):
		err = fmt.Errorf("the log gives %d named barriers; a block has at most 16", k.Barriers)
	case errors.Is(r.Err, occupancy.ErrCarveout):
		err = fmt.Errorf("--carveout %s: more than the %s of shared memory an SM has on cc %s", carve, units.FormatSize(int64(arch.SmemPerSM)), arch.CC)
	case r.Err != nil:
		err = r.Err
	}
	if err != nil {
		return reports.BuildRow{}, err
	}
	return reports.NewBuildRow(k, threads, from, r, occupancy.MaxThreadsByRegs(arch, k.Regs)), nil
}
