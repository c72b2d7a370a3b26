package reports

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// The catalog's list, one device's figures and an architecture's limits:
// the H100 SXM's datasheet figures (132 SMs, 3.35 TB/s, 50 MiB of L2,
// 989.4 dense bf16 TFLOP/s) and cc 9.0's limits (64 warps, 65,536
// registers, 228 KiB of shared memory per SM) in every format.
func TestDevicesReports(t *testing.T) {
	d := device(t, "h100")
	a, err := d.Limits()
	if err != nil {
		t.Fatal(err)
	}
	out := golden(t, "devices_h100", rendered{tables: DeviceDetail(d), records: DeviceFigureRecords(d, &a),
		view: DeviceView{Device: d, Limits: func() *ArchView { v := NewArchView(a); return &v }()}})
	contains(t, out, "H100 SXM", "3.35 TB/s", "989.4", `"sms": 132`, "3350000000000", "52428800")

	list := []devices.Device{d, device(t, "a100"), device(t, "l40s")}
	out = golden(t, "devices_list", rendered{tables: []Table{DeviceList(list)}, records: DeviceRecords(list), view: list})
	contains(t, out, "A100", "L40S", "H100 SXM,NVIDIA,Hopper,9.0,132,")

	out = golden(t, "arch_90", rendered{tables: ArchLimits(a), records: ArchRecords([]devices.Arch{a}), view: NewArchView(a)})
	contains(t, out, "65536", "233472", `"max_warps_per_sm": 64`)
	if v := NewArchView(a); len(v.Carveouts) == 0 || v.Carveouts[len(v.Carveouts)-1] != 228<<10 {
		t.Errorf("cc 9.0's carveouts %v: the largest is 228 KiB", v.Carveouts)
	}
	golden(t, "archs", rendered{tables: ArchList(devices.Archs())})
}
