package occupancy

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpucalc/gpucalc/units"
)

// ParseCarveout parses a carveout preference as users write it: "default"
// (or -1, or empty), a percentage such as 50%, or a size such as 100K
// (binary units). A bare number is refused: percent or bytes would both be
// a guess. Whether the size fits an SM is checked by Calculate.
func ParseCarveout(s string) (Carveout, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "" || t == "-1" || strings.EqualFold(t, "default"):
		return Carveout{}, nil
	case strings.HasSuffix(t, "%"):
		var p int
		if _, err := fmt.Sscanf(t, "%d%%", &p); err != nil || p < 0 || p > 100 || fmt.Sprintf("%d%%", p) != t {
			return Carveout{}, errors.New("a percentage is a whole number 0% to 100%")
		}
		return CarveoutPercent(p), nil
	case strings.Trim(t, "0123456789") == "":
		return Carveout{}, fmt.Errorf("write %s%% for a percentage or %sK for a size", t, t)
	}
	b, err := units.ParseSize(t)
	if err != nil {
		return Carveout{}, err
	}
	if b > math.MaxInt32 {
		return Carveout{}, errors.New("far larger than any GPU's shared memory")
	}
	return CarveoutBytes(int(b)), nil
}
