package bench

import (
	"sync"
	"time"
)

// cpuTracker is what every process spent over a span, by command, with
// the processes that start and end within it (render sandboxes, the
// `ferry` CLI, Git's server side): it reads them all every interval, and a
// process that exits counts up to its last reading.
type cpuTracker struct {
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup

	mu    sync.Mutex
	first map[procKey]time.Duration // at the start, of the processes live then
	last  map[procKey]procCPU
}

type procKey struct {
	pid   int
	start uint64
}

// trackCPU starts reading every process every interval.
func trackCPU(every time.Duration) *cpuTracker {
	t := &cpuTracker{done: make(chan struct{}), first: map[procKey]time.Duration{}, last: map[procKey]procCPU{}}
	for _, p := range liveProcs() {
		k := procKey{p.pid, p.start}
		t.first[k], t.last[k] = p.cpu, p
	}
	t.wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-t.done:
				return
			case <-tick.C:
				t.read()
			}
		}
	})
	return t
}

func (t *cpuTracker) read() {
	procs := liveProcs()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range procs {
		t.last[procKey{p.pid, p.start}] = p
	}
}

// stop ends the readings, reads once more and returns the core-seconds
// each command spent since the start, leaving out the commands that spent
// nothing; once stopped, it returns the same.
func (t *cpuTracker) stop() map[string]float64 {
	t.once.Do(func() {
		close(t.done)
		t.wg.Wait()
		t.read()
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]float64{}
	for k, p := range t.last {
		if d := (p.cpu - t.first[k]).Seconds(); d > 0 {
			out[p.comm] += d
		}
	}
	return out
}
