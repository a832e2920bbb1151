package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux this runs on.
const clockTicks = 100

// ProcSample is a process's CPU time so far and its resident memory.
type ProcSample struct {
	At  time.Time
	CPU time.Duration // user + system
	RSS int64         // bytes
}

// SampleProc reads /proc/<pid>/stat and /proc/<pid>/status.
func SampleProc(pid int) (ProcSample, error) {
	s := ProcSample{At: time.Now()}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("sample process %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces: count fields after its ')'.
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return s, fmt.Errorf("sample process %d: short /proc stat line", pid)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	s.CPU = time.Duration(utime+stime) * time.Second / clockTicks
	s.RSS, err = statusKB(pid, "VmRSS:")
	return s, err
}

// SampleTree is SampleProc with the CPU of the process's children added:
// those that ended and were waited for (cutime and cstime) and those
// running (their own utime and stime). PostgreSQL serves each connection
// from a child of the postmaster, which does little itself.
func SampleTree(pid int) (ProcSample, error) {
	s, err := SampleProc(pid)
	if err != nil {
		return s, err
	}
	if f, err := statFields(pid); err == nil && len(f) > 14 {
		cutime, _ := strconv.ParseInt(f[13], 10, 64)
		cstime, _ := strconv.ParseInt(f[14], 10, 64)
		s.CPU += time.Duration(cutime+cstime) * time.Second / clockTicks
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return s, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		f, err := statFields(child)
		if err != nil || len(f) < 13 || f[1] != strconv.Itoa(pid) {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		s.CPU += time.Duration(utime+stime) * time.Second / clockTicks
	}
	return s, nil
}

// statFields are the fields of /proc/<pid>/stat after the command name:
// f[0] is field 3 (state), f[1] the parent's pid.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	return strings.Fields(rest), nil
}

// sampleProcs samples every process of procs (by name), as SampleTree does:
// a process with its children.
func sampleProcs(procs map[string]int) (map[string]ProcSample, error) {
	out := make(map[string]ProcSample, len(procs))
	for name, pid := range procs {
		s, err := SampleTree(pid)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// CPUCores is the CPU a process used between two samples, in cores.
func CPUCores(a, b ProcSample) float64 {
	wall := b.At.Sub(a.At)
	if wall <= 0 {
		return 0
	}
	return float64(b.CPU-a.CPU) / float64(wall)
}

func statusKB(pid int, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == key {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("process %d: no %s in /proc status", pid, key)
}

// Machine describes where the figures were measured.
type Machine struct {
	Cores     int        `json:"cores"`
	CPU       string     `json:"cpu"`
	MemGiB    float64    `json:"memGiB"`
	GoVersion string     `json:"goVersion"`
	Load      [3]float64 `json:"load"`
}

// ThisMachine reads /proc.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), Load: LoadAvg()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.MemGiB = kb / (1 << 20)
			}
		}
	}
	return m
}

// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages.
func LoadAvg() [3]float64 {
	var out [3]float64
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	f := strings.Fields(string(data))
	for i := 0; i < 3 && i < len(f); i++ {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}

// cpuTimes is the machine's CPU time so far, from /proc/stat's cpu line, in
// clock ticks: busy (user, nice, system, irq, softirq, steal) and all.
type cpuTimes struct{ busy, total uint64 }

func machineCPU() cpuTimes {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, v := range f[1:9] {
		n, _ := strconv.ParseUint(v, 10, 64)
		t.total += n
		if i != 3 && i != 4 { // idle, iowait
			t.busy += n
		}
	}
	return t
}

// busyCores is how many of the machine's cores were busy on average
// between two readings (every process, the other users' too).
func busyCores(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total) * float64(runtime.NumCPU())
}

// cpuByCommand is the CPU time so far of every live process, summed by
// command name (kube-apiserver, etcd, temporal, ferry-worker, ...), less
// the kernel's threads (children of kthreadd, pid 2), whose names change
// with their work. Processes that exit between two readings are not in
// the difference: cpuTracker samples them.
func cpuByCommand() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, p := range liveProcs() {
		out[p.comm] += p.cpu
	}
	return out
}

// procCPU is one live process's CPU time so far (user + system).
type procCPU struct {
	pid   int
	start uint64 // since boot, in clock ticks: a pid's reuse has another
	comm  string
	cpu   time.Duration
}

// liveProcs reads every live process but the kernel's threads.
func liveProcs() []procCPU {
	var out []procCPU
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 20 || pid == 2 || f[1] == "2" { // f[1] is the parent's pid
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		start, _ := strconv.ParseUint(f[19], 10, 64)
		out = append(out, procCPU{pid: pid, start: start, comm: s[open+1 : end],
			cpu: time.Duration(utime+stime) * time.Second / clockTicks})
	}
	return out
}

// cpuSpent is what each command spent between two cpuByCommand readings,
// in core-seconds, leaving out commands that spent nothing.
func cpuSpent(a, b map[string]time.Duration) map[string]float64 {
	out := map[string]float64{}
	for cmd, t := range b {
		if d := (t - a[cmd]).Seconds(); d > 0 {
			out[cmd] = d
		}
	}
	return out
}
