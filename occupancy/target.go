package occupancy

import (
	"strconv"

	"github.com/gpucalc/gpucalc/devices"
)

// Target is the device or architecture an occupancy question is about.
type Target struct {
	// Device is the catalog name; empty when only an architecture was given.
	Device string `json:"device,omitempty"`
	// Origin says where the device came from when it was not named
	// ("default; set --device or GPUCALC_DEVICE").
	Origin string       `json:"device_origin,omitempty"`
	Arch   devices.Arch `json:"-"`
	CC     devices.CC   `json:"compute_capability"`
	// SMs is the device's SM count; 0 for an architecture.
	SMs int `json:"sms,omitempty"`
	// GPCs are the device's SMs per GPC for clusters, if known.
	GPCs []int `json:"-"`
}

// DeviceTarget is the target of a catalog device.
func DeviceTarget(d devices.Device, origin string) (Target, error) {
	arch, err := d.Limits()
	if err != nil {
		return Target{}, err
	}
	return Target{Device: d.Name, Origin: origin, Arch: arch, CC: d.CC, SMs: d.SMs, GPCs: d.ClusterGPCs}, nil
}

// ArchTarget is the target of a bare compute capability (no SM count).
func ArchTarget(a devices.Arch) Target { return Target{Arch: a, CC: a.CC} }

func (t Target) String() string {
	s := "compute capability " + t.Arch.CC.String() + " (" + t.Arch.CC.SM() + ", " + t.Arch.Family + ")"
	if t.Device != "" {
		s = t.Device + ", " + s
		if t.SMs > 0 {
			s += ", " + strconv.Itoa(t.SMs) + " SMs"
		}
	}
	if t.Origin != "" {
		s += " (" + t.Origin + ")"
	}
	return s
}
