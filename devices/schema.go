package devices

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/units"
	"go.yaml.in/yaml/v3"
)

// A device file is one YAML document: a mapping whose numbers are written
// {value: ..., source: KEY}, KEY naming an entry of the file's `sources`.
// data/gpus/h100-sxm.yaml is a complete example; docs/devices.md describes
// the schema. It is decoded strictly (unknown fields are errors) into the
// structs below, whose leaves keep their YAML node, so that every error,
// including one found only when the whole entry is checked, names a line.

// deviceFile is the schema of a device file.
type deviceFile struct {
	Name         text          `yaml:"name"`
	Vendor       text          `yaml:"vendor"`
	Aliases      texts         `yaml:"aliases"`
	Architecture text          `yaml:"architecture"`
	CC           text          `yaml:"compute_capability"`
	Sources      entries       `yaml:"sources"`
	SMs          quantity      `yaml:"sms"`
	ClusterGPCs  quantity      `yaml:"cluster_gpcs"`
	BoostClock   quantity      `yaml:"boost_clock"`
	TensorClock  quantity      `yaml:"tensor_clock"`
	Memory       memoryFile    `yaml:"memory"`
	L2           cacheFile     `yaml:"l2"`
	HostLink     linkFile      `yaml:"host_link"`
	PeerLink     linkFile      `yaml:"peer_link"`
	TDP          quantity      `yaml:"tdp"`
	SFU          quantity      `yaml:"sfu_per_sm_per_clock"`
	Dense        entries       `yaml:"dense"`
	Sparse       entries       `yaml:"sparse"`
	Measured     *measuredFile `yaml:"measured"`
}

type memoryFile struct {
	Type      text     `yaml:"type"`
	Size      quantity `yaml:"size"`
	Bandwidth quantity `yaml:"bandwidth"`
}

type cacheFile struct {
	Size      quantity `yaml:"size"`
	Bandwidth quantity `yaml:"bandwidth"`
}

type linkFile struct {
	Type      text     `yaml:"type"`
	Bandwidth quantity `yaml:"bandwidth"`
	Latency   quantity `yaml:"latency"`
}

type measuredFile struct {
	How                   text     `yaml:"how"`
	When                  text     `yaml:"when"`
	DRAMRead              quantity `yaml:"dram_read"`
	DRAMWrite             quantity `yaml:"dram_write"`
	DRAMCopy              quantity `yaml:"dram_copy"`
	L2                    quantity `yaml:"l2"`
	Smem                  quantity `yaml:"smem"`
	Peaks                 entries  `yaml:"peaks"`
	LaunchOverhead        quantity `yaml:"launch_overhead"`
	LatencyCycles         entries  `yaml:"latency_cycles"`
	AllReduceLatency      quantity `yaml:"allreduce_latency"`
	AllReduceBusBandwidth quantity `yaml:"allreduce_bus_bandwidth"`
}

// node is a field as the file wrote it: nil when the file does not give it.
// Decoding only records the node; the loader reads it once it knows the
// field's name and the file's sources.
type node struct{ n *yaml.Node }

// UnmarshalYAML keeps the node, and with it the line and the fact that the
// field was given.
func (f *node) UnmarshalYAML(n *yaml.Node) error {
	f.n = n
	return nil
}

func (f node) given() bool { return f.n != nil }

// The kinds of leaf a device file has.
type (
	// text is a non-empty string: vendor: NVIDIA.
	text struct{ node }
	// texts is a list of non-empty strings: aliases: [h100, h100-sxm].
	texts struct{ node }
	// quantity is a sourced number: {value: 700W, source: ds}.
	quantity struct{ node }
	// entries is a mapping of names, kept in file order: dense peaks by key,
	// latencies by name, sources by key.
	entries struct{ node }
)

// span is the range a figure may take: wide enough for any GPU built or
// announced, narrow enough that a typo (sms: 1e12, bandwidth: 0TB/s) is
// caught where it was written rather than as an absurd result, or an
// out-of-memory crash, downstream.
type span struct {
	lo, hi float64
	format func(float64) string
}

func plain(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func sizeSpan(lo, hi int64) span {
	return span{float64(lo), float64(hi), func(v float64) string { return units.FormatSize(int64(v)) }}
}

var (
	smsSpan       = span{1, 1024, plain}
	clockSpan     = span{100e6, 5e9, units.FormatFrequency}
	memorySpan    = sizeSpan(1<<20, 16<<40)
	l2SizeSpan    = sizeSpan(64<<10, 4<<30)
	dramSpan      = span{1e9, 100e12, units.FormatBandwidth}
	onChipSpan    = span{1e9, 1e15, units.FormatBandwidth} // L2, shared memory
	linkSpan      = span{100e6, 10e12, units.FormatBandwidth}
	linkLatSpan   = span{1e-9, 1e-3, units.FormatDuration}
	tdpSpan       = span{1, 10e3, func(v float64) string { return units.FormatDecimal(v, "W") }}
	sfuSpan       = span{1, 256, func(v float64) string { return units.FormatDecimal(v, "") }}
	peakSpan      = span{1e9, 1e17, units.FormatFLOPS}
	perSMSpan     = span{1, 65536, plain}
	launchSpan    = span{100e-9, 100e-3, units.FormatDuration}
	cyclesSpan    = span{1, 100000, plain}
	allReduceSpan = span{100e-9, 1, units.FormatDuration}
)

// peakOrder lists every peak key a device file may give, widest type first;
// listings follow it.
var peakOrder = []string{"fp64", "fp64_tensor", "fp32", "tf32_tensor", "bf16", "bf16_tensor", "fp16", "fp16_tensor",
	"fp8_tensor", "int8", "int8_tensor", "fp4_tensor"}

func peakKeys() []string {
	k := slices.Clone(peakOrder)
	sort.Strings(k)
	return k
}

func validPeakKey(k string) bool { return slices.Contains(peakOrder, k) }

// latencyNames are the latencies a measured section may give, in SM cycles.
var latencyNames = []string{"l1", "l2", "dram", "smem", "fma"}

// sections names the structs of the schema as a user knows them, with their
// fields, for unknown-field errors.
var sections = func() map[string][2]string {
	m := map[string][2]string{}
	for name, v := range map[string]any{
		"device file": deviceFile{}, "memory": memoryFile{}, "l2": cacheFile{},
		"host_link or peer_link": linkFile{}, "measured": measuredFile{},
	} {
		t := reflect.TypeOf(v)
		var fields []string
		for i := range t.NumField() {
			fields = append(fields, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
		}
		m[t.String()] = [2]string{name, strings.Join(fields, ", ")}
	}
	return m
}()
