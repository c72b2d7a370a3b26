package occupancy

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
)

func lookupArch(name string) (devices.Arch, error) {
	cc, err := devices.ParseCC(name)
	if err != nil {
		return devices.Arch{}, err
	}
	return devices.ArchFor(cc)
}

func TestBatchReader(t *testing.T) {
	in := "barriers,device,threads,regs,static_smem,dynamic_smem,carveout\n" +
		"3,sm_90,32,16,0,0,\n" + // NCU: 3 barriers on 9.0 → 21 blocks
		"1,sm_80,128,32,0,16384,50\n" +
		"1,sm_80,128,32\n" + // too few fields
		"1,sm_99,128,32,0,0,\n" + // unknown arch
		"1,sm_80,128,3x,0,0,\n" +
		"1,sm_80,128,32,0,0,101\n" +
		"1,sm_80,128,32,0,9223372036854775807,\n" + // dynamic_smem beyond any GPU and int32
		"1,sm_80,-5,32,0,0,\n" +
		"1,sm_80,128,32,0,1099511627777,\n" +
		"1,sm_80,128,32,\"0\",0,\n" + // quoted is fine
		"1,sm_80,12\"8,32,0,0,\n" + // a stray quote is this row's error
		"1,sm_80,128.0,32,0,0,\n" +
		"1,sm_80,128,32,0,48K,\n" + // sizes as the flags take them (48K was refused)
		"1,sm_80,128,32,16KiB,32K,\n" +
		"1,sm_80,128,32,0,48Kb,\n"
	br, err := NewBatchReader(strings.NewReader(in), lookupArch)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var row BatchRow
	for {
		err := br.Next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if row.Err != nil {
			got = append(got, row.Err.Error())
			continue
		}
		r := Calculate(row.Arch, row.Kernel, row.Launch)
		got = append(got, strings.Join([]string{row.Arch.CC.String(), row.Launch.Carveout.String(), r.Limiters.String(), string(rune('0' + r.Blocks/10)), string(rune('0' + r.Blocks%10))}, " "))
	}
	want := []string{
		"9.0 default barriers 2 1",
		"8.0 50% shared_memory 0 5", // 50% of 164 KiB → 100 KiB; 100/17 = 5
		"line 4: 4 fields, the header has 7",
		"line 5: compute capability 9.9 is not in the catalog",
		`line 6: column 4 (regs) "3x": expected a whole number from 0 to 1099511627776`,
		`line 7: column 7 (carveout) "101": expected -1 or empty for the default, or a percentage 0..100`,
		`line 8: column 6 (dynamic_smem) "9223372036854775807": a size such as 48K`,
		`line 9: column 3 (threads) "-5": expected a whole number from 0 to 1099511627776`,
		`line 10: column 6 (dynamic_smem) "1099511627777": expected a whole number from 0 to 1099511627776`,
		"8.0 default warps|registers 1 6",
		`line 12: a " inside a field`,
		`line 13: column 3 (threads) "128.0": expected a whole number`,
		"8.0 default shared_memory 0 3", // 164 KiB / (48 KiB + 1 KiB reserved) = 3
		"8.0 default shared_memory 0 3",
		`line 16: column 6 (dynamic_smem) "48Kb": a size such as 48K`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("row %d: got %q, want %q", i+1, got[i], want[i])
		}
	}
}

// batchLog records what RunBatch writes.
type batchLog struct {
	rows    []string
	flushed bool
}

func (b *batchLog) Write(fields []string, n int, r Result, err error) error {
	cell := strings.Join(fields, ",") + " → " + strconv.Itoa(r.Blocks)
	if err != nil {
		cell += " " + err.Error()
	}
	b.rows = append(b.rows, cell)
	return nil
}

func (b *batchLog) Flush() error { b.flushed = true; return nil }

// RunBatch answers every row in order, a bad row with its error; input
// broken before its end stops the batch after the rows before it.
func TestRunBatch(t *testing.T) {
	in := "device,threads,regs,static_smem,dynamic_smem,carveout\n" +
		"sm_90,256,64,0,49152,\n" + // 4 blocks (registers and shared memory)
		"sm_90,2000,1,0,0,\n" + // a block of more than 1024 threads
		"sm_80,128,32,0,0,\n" +
		"sm_80,\"128,32,0,0,\n" // an unclosed quote: the input ends here
	br, err := NewBatchReader(strings.NewReader(in), lookupArch)
	if err != nil {
		t.Fatal(err)
	}
	var log batchLog
	done := 0
	n, err := RunBatch(br, &log, func(rows int) { done = rows })
	if err != nil {
		t.Fatal(err)
	}
	if n.Rows != 3 || n.Failed != 1 || done != 3 || !log.flushed || n.ReadErr == nil || !strings.Contains(n.ReadErr.Error(), "line 5") {
		t.Errorf("count %+v, progress %d, flushed %v", n, done, log.flushed)
	}
	if len(log.rows) != 3 || log.rows[0] != "sm_90,256,64,0,49152, → 4" || !strings.Contains(log.rows[1], `line 3: column 2 (threads) "2000": a block has 1 to`) || log.rows[2] != "sm_80,128,32,0,0, → 16" {
		t.Errorf("rows %q", log.rows)
	}
}

func TestBatchHeader(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "batch input is empty",
		"device,threads\n":               `line 1: no column "regs"`,
		"device,threads,regs,bogus\n":    `line 1, column 4: unknown column "bogus"`,
		"device,device,threads\n":        `line 1, columns 1 and 2: both are "device"`,
		"\"device,threads,regs\n1,2,3\n": "batch header",
	} {
		_, err := NewBatchReader(strings.NewReader(in), lookupArch)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

// FuzzBatchReader: no input makes the reader or the calculation panic, and
// reading always ends.
func FuzzBatchReader(f *testing.F) {
	f.Add("device,threads,regs,static_smem,dynamic_smem,carveout\nsm_90,256,64,0,49152,\n")
	f.Add("device,threads,regs,static_smem,dynamic_smem,carveout,max_threads,barriers\n8.6,1024,255,49152,0,100,1,16\nsm_75,-1,-5,-3,1e9,,,\n")
	f.Add("device,threads,regs,static_smem,dynamic_smem,carveout\n\"sm_90,1,2\n\"x\"y,1\n,,,,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		br, err := NewBatchReader(strings.NewReader(in), lookupArch)
		if err != nil {
			return
		}
		var row BatchRow
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatal("reader does not advance")
			}
			err := br.Next(&row)
			if err == io.EOF {
				// One row per record: count them with encoding/csv, which
				// goes on after a stray quote in an unquoted field.
				cr := csv.NewReader(strings.NewReader(in))
				cr.FieldsPerRecord = -1
				n := -1
				for {
					_, err := cr.Read()
					if err == io.EOF {
						break
					}
					if err != nil && !errors.Is(err, csv.ErrBareQuote) {
						return
					}
					n++
				}
				if i != n {
					t.Fatalf("%d rows for %d records", i, n)
				}
				return
			}
			var re *rows.Error
			if err != nil {
				if !errors.As(err, &re) || re.Line < 1 {
					t.Fatalf("error %v has no line", err)
				}
				return
			}
			if row.Err == nil {
				Calculate(row.Arch, row.Kernel, row.Launch)
			}
		}
	})
}

// FuzzCalculate: any integers give a result or an error, never a panic, and
// the result respects the limits.
func FuzzCalculate(f *testing.F) {
	f.Add(9, 0, 256, 64, 0, 49152, -1, 0, 1)
	f.Add(7, 5, 1, 0, 0, 0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, major, minor, threads, regs, static, dyn, carve, maxThreads, barriers int) {
		a, err := devices.ArchFor(devices.CC{Major: major, Minor: minor})
		if err != nil {
			return
		}
		c := Carveout{}
		if carve >= 0 {
			c = CarveoutPercent(carve)
		}
		r := Calculate(a, Kernel{Regs: regs, StaticSmem: static, MaxThreads: maxThreads, Barriers: barriers}, Launch{Threads: threads, DynamicSmem: dyn, Carveout: c})
		if r.Err == nil && (r.Blocks < 0 || r.Blocks > a.MaxBlocksPerSM || r.Warps > a.MaxWarpsPerSM) {
			t.Fatalf("%+v", r)
		}
	})
}
