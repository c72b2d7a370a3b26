package devices

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// CC is a compute capability such as 9.0.
type CC struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
}

func (c CC) String() string {
	if c == (CC{}) {
		return ""
	}
	return fmt.Sprintf("%d.%d", c.Major, c.Minor)
}

// SM is the architecture name nvcc uses: sm_90.
func (c CC) SM() string { return fmt.Sprintf("sm_%d%d", c.Major, c.Minor) }

// MarshalText writes "9.0".
func (c CC) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads what MarshalText writes; empty is no compute
// capability (a part that is not NVIDIA's).
func (c *CC) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*c = CC{}
		return nil
	}
	v, err := ParseCC(string(b))
	*c = v
	return err
}

// ParseCC parses a compute capability written as 9.0, 90, sm_90, sm90,
// compute_90 or sm_100a.
func ParseCC(s string) (CC, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"sm_", "sm", "compute_", "cc"} {
		if strings.HasPrefix(t, p) {
			t = strings.TrimPrefix(t, p)
			break
		}
	}
	t = strings.TrimRight(t, "af") // sm_90a, sm_100f: same limits
	var c CC
	var err error
	if i := strings.IndexByte(t, '.'); i >= 0 {
		c.Major, err = strconv.Atoi(t[:i])
		if err == nil {
			c.Minor, err = strconv.Atoi(t[i+1:])
		}
	} else if len(t) >= 2 {
		c.Major, err = strconv.Atoi(t[:len(t)-1])
		if err == nil {
			c.Minor, err = strconv.Atoi(t[len(t)-1:])
		}
	} else {
		err = fmt.Errorf("too short")
	}
	if err != nil || c.Major <= 0 || c.Minor < 0 {
		return CC{}, fmt.Errorf("compute capability %q: expected a form such as 9.0, 90 or sm_90", s)
	}
	return c, nil
}

// Arch holds the occupancy limits of one compute capability: what
// cudaOccupancyMaxActiveBlocksPerMultiprocessor needs besides the kernel.
type Arch struct {
	CC     CC     `json:"compute_capability" yaml:"-"`
	Family string `json:"family" yaml:"family"`
	// Parts lists examples of GPUs with this compute capability.
	Parts              string `json:"parts" yaml:"parts"`
	WarpSize           int    `json:"warp_size" yaml:"warp_size"`
	MaxThreadsPerBlock int    `json:"max_threads_per_block" yaml:"max_threads_per_block"`
	MaxThreadsPerSM    int    `json:"max_threads_per_sm" yaml:"max_threads_per_sm"`
	MaxWarpsPerSM      int    `json:"max_warps_per_sm" yaml:"max_warps_per_sm"`
	MaxBlocksPerSM     int    `json:"max_blocks_per_sm" yaml:"max_blocks_per_sm"`
	RegsPerSM          int    `json:"regs_per_sm" yaml:"regs_per_sm"`
	RegsPerBlock       int    `json:"regs_per_block" yaml:"regs_per_block"`
	MaxRegsPerThread   int    `json:"max_regs_per_thread" yaml:"max_regs_per_thread"`
	// RegAllocUnit is the register allocation unit, in registers per warp.
	RegAllocUnit int `json:"reg_alloc_unit" yaml:"reg_alloc_unit"`
	// WarpAllocGranularity is the number of SM sub-partitions; a block's
	// warps are rounded up to it for the register hardware check.
	WarpAllocGranularity int `json:"warp_alloc_granularity" yaml:"warp_alloc_granularity"`
	// SmemPerSM is the largest shared-memory carveout, in bytes.
	SmemPerSM int `json:"smem_per_sm_bytes" yaml:"smem_per_sm"`
	// SmemPerBlock is what a block may use without the opt-in attribute.
	SmemPerBlock int `json:"smem_per_block_bytes" yaml:"smem_per_block"`
	// SmemPerBlockOptin is the most a block may use with the opt-in
	// attribute (cudaFuncAttributeMaxDynamicSharedMemorySize).
	SmemPerBlockOptin int `json:"smem_per_block_optin_bytes" yaml:"smem_per_block_optin"`
	// SmemReservedPerBlock is shared memory CUDA reserves for each block
	// (1 KiB from cc 8.0 on).
	SmemReservedPerBlock int `json:"smem_reserved_per_block_bytes" yaml:"smem_reserved_per_block"`
	SmemAllocUnit        int `json:"smem_alloc_unit_bytes" yaml:"smem_alloc_unit"`
	// CarveoutsKiB are the supported shared-memory capacities per SM, KiB,
	// ascending.
	CarveoutsKiB  []int `json:"-" yaml:"carveouts_kib"`
	BarriersPerSM int   `json:"barriers_per_sm" yaml:"barriers_per_sm"`
	// MaxClusterSize is the portable thread-block-cluster size (0: no
	// clusters); MaxClusterSizeNonPortable the size allowed with the opt-in.
	MaxClusterSize            int `json:"max_cluster_size,omitempty" yaml:"max_cluster_size,omitempty"`
	MaxClusterSizeNonPortable int `json:"max_cluster_size_nonportable,omitempty" yaml:"max_cluster_size_nonportable,omitempty"`
	// Sources of the numbers above.
	Sources []string `json:"sources" yaml:"-"`
}

type archFile struct {
	Sources map[string]string `yaml:"sources"`
	Archs   []struct {
		CC     string   `yaml:"cc"`
		Source []string `yaml:"source"`
		Arch   `yaml:",inline"`
	} `yaml:"archs"`
}

// archs are the limits of every compute capability, from the snapshot; from
// the YAML while there is no snapshot to read, as when it is first written
// (validating the catalog's devices needs their architectures).
var archs = sync.OnceValues(func() (map[CC]Arch, error) {
	if s, err := embedded(); err == nil {
		return s.archs, nil
	}
	return archsFromYAML()
})

// archsFromYAML reads data/arch/limits.yaml.
func archsFromYAML() (map[CC]Arch, error) {
	data, err := dataFS.ReadFile("data/arch/limits.yaml")
	if err != nil {
		return nil, err
	}
	var f archFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("data/arch/limits.yaml: %w", err)
	}
	m := map[CC]Arch{}
	for _, a := range f.Archs {
		cc, err := ParseCC(a.CC)
		if err != nil {
			return nil, fmt.Errorf("data/arch/limits.yaml: %w", err)
		}
		a.Arch.CC = cc
		for _, s := range a.Source {
			src, ok := f.Sources[s]
			if !ok {
				return nil, fmt.Errorf("data/arch/limits.yaml: cc %s: unknown source %q", cc, s)
			}
			a.Arch.Sources = append(a.Arch.Sources, src)
		}
		m[cc] = a.Arch
	}
	return m, nil
}

// ArchFor returns the limits of a compute capability.
func ArchFor(cc CC) (Arch, error) {
	m, err := archs()
	if err != nil {
		return Arch{}, err
	}
	if a, ok := m[cc]; ok {
		return a, nil
	}
	return Arch{}, fmt.Errorf("compute capability %s is not in the catalog (known: %s); occupancy rules differ per architecture, so gpucalc will not guess", cc, strings.Join(archNames(m), ", "))
}

// Archs lists the known compute capabilities' limits in ascending order.
func Archs() []Arch {
	m, err := archs()
	if err != nil {
		return nil
	}
	return sortedArchs(m)
}

func sortedArchs(m map[CC]Arch) []Arch {
	out := make([]Arch, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CC.Major != out[j].CC.Major {
			return out[i].CC.Major < out[j].CC.Major
		}
		return out[i].CC.Minor < out[j].CC.Minor
	})
	return out
}

func archNames(m map[CC]Arch) []string {
	var s []string
	for _, a := range sortedArchs(m) {
		s = append(s, a.CC.String())
	}
	return s
}
