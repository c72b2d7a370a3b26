// Package devices is gpucalc's catalog of GPUs and of the per-architecture
// limits that occupancy depends on.
//
// The catalog is data: one YAML file per GPU under data/gpus and one file of
// compute-capability limits under data/arch, embedded in the binary. Every
// number in them names its source. Users add devices, or override fields of a
// catalog entry (a measured bandwidth, say), with files of the same schema;
// see Catalog.With.
//
// Peak rates are dense. 2:4-sparse rates are kept apart, in Device.Sparse, and
// never used for a roofline unless a caller asks for them by name.
package devices

import "strings"

import "fmt"

// Device is one GPU model.
type Device struct {
	Name         string   `json:"name"`
	Vendor       string   `json:"vendor"`
	Aliases      []string `json:"aliases,omitempty"`
	Architecture string   `json:"architecture"`
	// CC is the compute capability; zero for non-NVIDIA parts.
	CC  CC  `json:"compute_capability"`
	SMs int `json:"sms"`
	// ClusterGPCs is the SM count of each GPC as thread-block clusters see
	// it (a cluster's blocks run on distinct SMs of one GPC); empty when
	// unknown.
	ClusterGPCs []int `json:"cluster_gpcs,omitempty"`
	// BoostClockHz is the maximum SM clock; TensorClockHz is the clock the
	// datasheet's tensor peaks assume (lower than boost on some parts).
	BoostClockHz  float64 `json:"boost_clock_hz"`
	TensorClockHz float64 `json:"tensor_clock_hz"`
	Memory        Memory  `json:"memory"`
	L2            Cache   `json:"l2"`
	HostLink      Link    `json:"host_link"`
	// PeerLink is the GPU-to-GPU link within one host (NVLink, an NVLink
	// bridge); BytesPerSecond is per direction, per GPU. It is empty for
	// parts without one, whose peer traffic goes over the host link (PCIe);
	// see Peer.
	PeerLink Link    `json:"peer_link"`
	TDPWatts float64 `json:"tdp_watts"`
	// SFUPerSMPerClock is the part's own transcendental (exp) rate where it
	// differs from its family's (Blackwell Ultra doubles Blackwell's);
	// zero: the family's.
	SFUPerSMPerClock float64 `json:"sfu_per_sm_per_clock,omitempty"`
	// Dense peak rates in operations per second, by PeakKey.
	Dense map[string]Peak `json:"dense_peaks"`
	// Sparse holds 2:4 structured-sparsity rates, by PeakKey; never mixed
	// into Dense.
	Sparse map[string]Peak `json:"sparse_peaks,omitempty"`
	// Sources maps a field path ("memory.bandwidth", "dense.bf16_tensor")
	// to the source of its number.
	Sources map[string]string `json:"sources"`
	// Measured holds ceilings measured on a real part (tools/measure), which
	// override the datasheet where a model wants achievable figures.
	Measured *Measured `json:"measured,omitempty"`
	// Origin is the file the entry came from ("builtin" or a user file).
	Origin []string `json:"origin"`
}

// Measured is what a measurement run found on one GPU. Zero means not
// measured.
type Measured struct {
	// How and When say how and when it was measured (tool, versions, clocks).
	How  string `json:"how"`
	When string `json:"when"`
	// Bandwidths in bytes per second.
	DRAMRead  float64 `json:"dram_read_bytes_per_second,omitempty"`
	DRAMWrite float64 `json:"dram_write_bytes_per_second,omitempty"`
	DRAMCopy  float64 `json:"dram_copy_bytes_per_second,omitempty"`
	L2        float64 `json:"l2_bytes_per_second,omitempty"`
	Smem      float64 `json:"smem_bytes_per_second,omitempty"`
	// Peaks are achieved rates in operations per second, by PeakKey
	// (fp32, fp64, bf16_tensor, ...).
	Peaks map[string]float64 `json:"peaks_ops_per_second,omitempty"`
	// LaunchOverhead is the time of an empty kernel launch, in seconds.
	LaunchOverhead float64 `json:"launch_overhead_seconds,omitempty"`
	// LatencyCycles are unloaded latencies in SM cycles, by name: l1, l2,
	// dram, smem, fma.
	LatencyCycles map[string]float64 `json:"latency_cycles,omitempty"`
	// AllReduceLatency (seconds) and AllReduceBusBandwidth (bytes per
	// second, as nccl-tests defines bus bandwidth) model an all-reduce of
	// b bytes over n GPUs of one host as
	// AllReduceLatency + b·2(n−1)/n / AllReduceBusBandwidth.
	AllReduceLatency      float64 `json:"allreduce_latency_seconds,omitempty"`
	AllReduceBusBandwidth float64 `json:"allreduce_bus_bytes_per_second,omitempty"`
}

// Memory is device (DRAM) memory.
type Memory struct {
	Type           string  `json:"type"`
	Bytes          int64   `json:"bytes"`
	BytesPerSecond float64 `json:"bytes_per_second"`
}

// Cache is a cache level. BytesPerSecond is zero where no public source gives
// a measured bandwidth.
type Cache struct {
	Bytes          int64   `json:"bytes"`
	BytesPerSecond float64 `json:"bytes_per_second,omitempty"`
}

// Link is the connection to the host or to peer GPUs. BytesPerSecond is per
// direction.
type Link struct {
	Type           string  `json:"type"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	// LatencySeconds is the one-way latency of a small transfer; zero where
	// no source gives one.
	LatencySeconds float64 `json:"latency_seconds,omitempty"`
}

// Peak is a peak rate and how it arises.
type Peak struct {
	// PerSecond is operations (FLOPs, or integer ops) per second.
	PerSecond float64 `json:"ops_per_second"`
	// PerSMPerClock is the operations per SM per clock the peak is built
	// from; zero when the source does not give it.
	PerSMPerClock float64 `json:"ops_per_sm_per_clock,omitempty"`
	// Clock says which clock the peak assumes: "boost" or "tensor".
	Clock string `json:"clock,omitempty"`
}

// Level is a level of the memory hierarchy.
type Level string

// Memory levels.
const (
	DRAM Level = "dram"
	L2   Level = "l2"
)

// Peak returns the dense peak rate, in operations per second, for data type
// d on path p.
func (d Device) Peak(dt DType, p Path) (float64, error) {
	k := PeakKey(dt, p)
	if pk, ok := d.Dense[k]; ok && pk.PerSecond > 0 {
		return pk.PerSecond, nil
	}
	return 0, fmt.Errorf("device %q has no %s peak (it has %s)", d.Name, k, strings.Join(d.PeakKeys(), ", "))
}

// PeakKeys lists the dense peaks the device has, widest data type first
// (fp64, fp64_tensor, fp32, tf32_tensor, ...).
func (d Device) PeakKeys() []string {
	var keys []string
	for _, k := range peakOrder {
		if _, ok := d.Dense[k]; ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// Bandwidth returns the datasheet bandwidth of a memory level in bytes per
// second, or zero where the catalog has none (L2 on most parts).
func (d Device) Bandwidth(l Level) float64 {
	switch l {
	case DRAM:
		return d.Memory.BytesPerSecond
	case L2:
		return d.L2.BytesPerSecond
	}
	return 0
}

// Ridge is the arithmetic intensity (FLOP per DRAM byte) at which the dense
// peak of dt on p meets the DRAM bandwidth.
func (d Device) Ridge(dt DType, p Path) (float64, error) {
	pk, err := d.Peak(dt, p)
	if err != nil {
		return 0, err
	}
	if d.Memory.BytesPerSecond <= 0 {
		return 0, fmt.Errorf("device %q has no memory bandwidth", d.Name)
	}
	return pk / d.Memory.BytesPerSecond, nil
}

// Datasheet returns the device without its measured figures, for figures
// that must rest on the datasheet alone (a lower bound, or a comparison of
// the model with and without calibration).
func (d Device) Datasheet() Device {
	d.Measured = nil
	return d
}

// Peer returns the link that GPU-to-GPU traffic of one host takes: PeerLink
// where the part has one, else the host link, since peers without NVLink
// exchange data over PCIe at no more than the host link's rate.
func (d Device) Peer() Link {
	if d.PeerLink.BytesPerSecond > 0 {
		return d.PeerLink
	}
	return d.HostLink
}

// Source returns the source of a field ("memory.bandwidth", "dense.fp32").
func (d Device) Source(field string) string { return d.Sources[field] }

// Limits returns the occupancy limits of the device's compute capability. It
// fails for parts outside NVIDIA's occupancy model.
func (d Device) Limits() (Arch, error) {
	if d.Vendor != "NVIDIA" {
		return Arch{}, fmt.Errorf("device %q is not an NVIDIA GPU (vendor %s): occupancy follows NVIDIA's CUDA rules and cannot be computed for it (roofline works)", d.Name, d.Vendor)
	}
	return ArchFor(d.CC)
}
