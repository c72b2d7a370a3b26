package reports

import "github.com/gpucalc/gpucalc/devices"

// DeviceTarget is the occupancy target of a catalog device; origin says
// where the device came from when it was not named.
func DeviceTarget(d devices.Device, origin string) (Target, error) {
	arch, err := d.Limits()
	if err != nil {
		return Target{}, err
	}
	return Target{Device: d.Name, Origin: origin, Arch: arch, CC: d.CC, SMs: d.SMs, GPCs: d.ClusterGPCs}, nil
}

// ArchTarget is the occupancy target of a compute capability (sm_90, 9.0
// or 90): no device, so no SM count.
func ArchTarget(s string) (Target, error) {
	cc, err := devices.ParseCC(s)
	if err != nil {
		return Target{}, err
	}
	arch, err := devices.ArchFor(cc)
	if err != nil {
		return Target{}, err
	}
	return Target{Arch: arch, CC: cc}, nil
}
