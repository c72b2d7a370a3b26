package occupancy

import (
	"fmt"
	"strings"
)

// NamedBlockSize is a block size given for the kernels of one name, as
// --launch NAME=THREADS gives it: the symbol, the demangled name, the short
// name or the short name without template arguments.
type NamedBlockSize struct {
	Name    string
	Threads int
}

// BlockSizes assigns a block size to every kernel of a build log: the one
// named for it, else def. A kernel matched by two names with different sizes
// is an error, as is a name that matches no kernel: neither is left to the
// order of the flags. from[i] says which name gave kernel i its size ("" for
// def).
func BlockSizes(ks []BuildKernel, def int, named []NamedBlockSize) (threads []int, from []string, err error) {
	threads = make([]int, len(ks))
	from = make([]string, len(ks))
	used := make([]bool, len(named))
	for i, k := range ks {
		threads[i] = def
		for j, n := range named {
			if !k.Matches(n.Name) {
				continue
			}
			used[j] = true
			if from[i] != "" && threads[i] != n.Threads {
				return nil, nil, fmt.Errorf("kernel %s is matched by both %s=%d and %s=%d: name it once, or by its full name", k.Short, from[i], threads[i], n.Name, n.Threads)
			}
			threads[i], from[i] = n.Threads, n.Name
		}
	}
	var unused []string
	for j, n := range named {
		if !used[j] {
			unused = append(unused, n.Name)
		}
	}
	if len(unused) > 0 {
		return nil, nil, fmt.Errorf("no kernel named %s in the log", strings.Join(unused, ", "))
	}
	return threads, from, nil
}
