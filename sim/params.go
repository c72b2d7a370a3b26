package sim

import (
	"fmt"

	"github.com/gpucalc/gpucalc/devices"
)

// Model constants: the same for every device. Channels and Jitter were
// fitted once, to the H100 streaming-read curve (ILP 1, 128-thread blocks) of
// testdata/lat_hide.csv, and are not refitted per curve.
const (
	// smemBytesPerCycle: shared memory / L1 serves about 128 B per clock
	// per SM on V100, A100 and H100 (RRZE-HPC/gpu-benches README, gpu-cache).
	smemBytesPerCycle = 128
	// channels the SM's DRAM share is spread over; fewer channels mean more
	// collisions and so latency that grows earlier under load, more
	// channels a longer service per line. With the H100's measured DRAM
	// figures, a grid over 4-16 channels and 0-20 % jitter put the read
	// curve's mean absolute error between 1.9 % and 13 %; 6 channels with
	// 5 % jitter was best.
	channels = 6
	// jitter is the half-width of the DRAM latency spread, as a fraction of
	// the DRAM latency.
	jitter = 0.05
)

// Setup is a device's simulation parameters with the sources of each and
// what converts the SM's results to whole-GPU figures.
type Setup struct {
	Device  string  `json:"device"`
	Params  Params  `json:"params"`
	SMs     int     `json:"sms"`
	ClockHz float64 `json:"clock_hz"`
	// Sources maps a parameter (the JSON name in Params) to its source.
	Sources map[string]string `json:"sources"`
	// Measured lists the parameters taken from the device's measured
	// section, and MeasuredBy says how and when they were measured.
	Measured   []string `json:"measured,omitempty"`
	MeasuredBy string   `json:"measured_by,omitempty"`
	// PeakFLOPS is the device's dense FP32 peak and DRAMBandwidth its
	// datasheet DRAM bandwidth, for the roofline bounds.
	PeakFLOPS     float64 `json:"fp32_peak_flops_per_second"`
	DRAMBandwidth float64 `json:"dram_bandwidth_bytes_per_second"`
}

// ForDevice builds the simulation parameters of a device from the catalog:
// its architecture's latencies (devices.Device.Latency, measured ones in
// place of catalog ones), the SM's share of DRAM bandwidth (measured read
// bandwidth if the device has one, else the datasheet figure times the
// architecture's achievable fraction) and the model constants.
func ForDevice(d devices.Device, seed uint64) (Setup, error) {
	l, err := d.Latency()
	if err != nil {
		return Setup{}, err
	}
	if d.SMs <= 0 || d.BoostClockHz <= 0 {
		return Setup{}, fmt.Errorf("device %q: the simulator needs its SM count and boost clock", d.Name)
	}
	peak, err := d.Peak(devices.FP32, devices.CUDACores)
	if err != nil {
		return Setup{}, err
	}
	if d.Memory.BytesPerSecond <= 0 {
		return Setup{}, fmt.Errorf("device %q has no DRAM bandwidth", d.Name)
	}
	s := Setup{
		Device:        d.Name,
		SMs:           d.SMs,
		ClockHz:       d.BoostClockHz,
		PeakFLOPS:     peak,
		DRAMBandwidth: d.Memory.BytesPerSecond,
		Sources:       map[string]string{},
	}
	bw := d.Memory.BytesPerSecond * l.DRAMEfficiency
	s.Sources["dram_bytes_per_cycle"] = fmt.Sprintf("datasheet DRAM bandwidth (%s) × achievable fraction %.3g (%s), over %d SMs at %g MHz",
		d.Source("memory.bandwidth"), l.DRAMEfficiency, l.Sources["dram_efficiency"], d.SMs, d.BoostClockHz/1e6)
	if d.Measured != nil && d.Measured.DRAMRead > 0 {
		bw = d.Measured.DRAMRead
		s.Sources["dram_bytes_per_cycle"] = fmt.Sprintf("measured: DRAM read bandwidth, %s, over %d SMs at %g MHz", d.Measured.How, d.SMs, d.BoostClockHz/1e6)
		s.Measured = append(s.Measured, "dram_bytes_per_cycle")
	}
	s.Params = Params{
		Schedulers:        l.Schedulers,
		FMALatency:        l.FMALatency,
		FMAInterval:       l.FMAInterval,
		BranchBubble:      l.BranchBubble,
		SmemLatency:       l.SmemLatency,
		SmemBytesPerCycle: smemBytesPerCycle,
		DRAMLatency:       l.DRAMLatency,
		DRAMBytesPerCycle: bw / (float64(d.SMs) * d.BoostClockHz),
		Channels:          channels,
		Jitter:            jitter * l.DRAMLatency,
		Seed:              seed,
	}
	for _, f := range []string{"schedulers", "fma_latency", "fma_interval", "branch_bubble", "smem_latency", "dram_latency"} {
		s.Sources[f] = l.Sources[f]
		if len(l.Sources[f]) > 9 && l.Sources[f][:9] == "measured:" {
			s.Measured = append(s.Measured, f)
		}
	}
	if len(s.Measured) > 0 {
		s.MeasuredBy = d.Measured.How + " (" + d.Measured.When + ")"
	}
	s.Sources["smem_bytes_per_cycle"] = "RRZE-HPC/gpu-benches README (gpu-cache: about 128 B/clock/SM on V100, A100, H100)"
	s.Sources["channels"] = "model constant, fitted once to the H100 read curve (sim/testdata/lat_hide.csv)"
	s.Sources["jitter"] = s.Sources["channels"]
	return s, nil
}

// GBps converts a result to the GPU's global-memory throughput in GB/s
// (every SM alike).
func (s Setup) GBps(r Result) float64 {
	return r.BytesPerCycle() * float64(s.SMs) * s.ClockHz / 1e9
}

// GFLOPs converts a result to the GPU's FP32 throughput in GFLOP/s.
func (s Setup) GFLOPs(r Result) float64 {
	return r.FLOPsPerCycle() * float64(s.SMs) * s.ClockHz / 1e9
}

// Point is one simulated occupancy point with its analytic bounds, as
// whole-GPU rates.
type Point struct {
	Warps          int     `json:"warps_per_sm"`
	AchievedGBps   float64 `json:"achieved_gbps"`
	AchievedGFLOPs float64 `json:"achieved_gflops"`
	BoundGBps      float64 `json:"bound_gbps"`
	BoundGFLOPs    float64 `json:"bound_gflops"`
	// IPC is warp instructions per cycle per SM; MeanLoadLatency the
	// loaded latency of global loads in cycles.
	IPC             float64 `json:"ipc"`
	MeanLoadLatency float64 `json:"mean_load_latency_cycles"`
	Cycles          int64   `json:"cycles"`
	Instructions    int64   `json:"warp_instructions"`
	// Scaled is Result.Scaled: non-zero when the run was cut at
	// MaxInstructions and scaled.
	Scaled float64 `json:"scaled,omitempty"`
}

// Bound returns the analytic ceilings of k at warps resident warps per SM,
// in GB/s and GFLOP/s: the roofline (datasheet DRAM bandwidth, FP32 peak,
// and each through the kernel's FLOP per byte) and Little's law (each
// warp's loads in flight for the unloaded DRAM latency; each warp's FMA
// chains one FMA per FMA latency). Zero where the kernel moves no bytes or
// does no FLOPs.
func (s Setup) Bound(k Kernel, warps int) (gbps, gflops float64) {
	perSec := float64(s.SMs) * s.ClockHz
	bytes := float64(k.Loads*k.LoadBytes + k.Stores*k.StoreBytes)
	flops := float64(k.FMAs())
	if bytes > 0 {
		gbps = s.DRAMBandwidth
		if k.Loads > 0 && k.Stores == 0 {
			inFlight := float64(warps * k.Loads * k.LoadBytes * warpSize)
			gbps = min(gbps, inFlight/s.Params.DRAMLatency*perSec)
		}
	}
	if flops > 0 {
		gflops = min(s.PeakFLOPS, float64(warps*k.Chains)*warpSize*2/s.Params.FMALatency*perSec)
	}
	if bytes > 0 && flops > 0 {
		ai := k.FLOPsPerByte()
		gbps, gflops = min(gbps, gflops/ai), min(gflops, gbps*ai)
	}
	return gbps / 1e9, gflops / 1e9
}

// Sweep simulates k at each count of resident warps per SM. progress, when
// not nil, is called from time to time with the fraction of the sweep done.
// Each point costs at most MaxInstructions simulated warp instructions.
func (s Setup) Sweep(k Kernel, warps []int, progress func(fraction float64)) ([]Point, error) {
	out := make([]Point, 0, len(warps))
	for i, n := range warps {
		var p func(float64)
		if progress != nil {
			p = func(f float64) { progress((float64(i) + f) / float64(len(warps))) }
		}
		r, err := RunProgress(s.Params, k, n, p)
		if err != nil {
			return nil, err
		}
		bg, bf := s.Bound(k, n)
		out = append(out, Point{
			Warps:           n,
			AchievedGBps:    s.GBps(r),
			AchievedGFLOPs:  s.GFLOPs(r),
			BoundGBps:       bg,
			BoundGFLOPs:     bf,
			IPC:             r.IPC(),
			MeanLoadLatency: r.MeanLoadLatency,
			Cycles:          r.Cycles,
			Instructions:    r.Instructions,
			Scaled:          r.Scaled,
		})
	}
	return out, nil
}
