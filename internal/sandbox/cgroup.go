package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processLimit is the most processes (threads included) one sandbox holds
// at once, in both sandboxed modes: a renderer needs a few dozen threads,
// a plugin a few processes more; a fork bomb stops here.
const processLimit = 512

// cgroups is where the process sandbox makes a cgroup of its own for each
// sandbox, bounding the memory and the processes of all that runs in it.
// The kernel offers it in one of two shapes:
//   - cgroup v2: one directory, the worker's own cgroup, whose children get
//     the memory and pids controllers; the sandbox is cloned into its
//     cgroup (CLONE_INTO_CGROUP), so that it never runs outside it;
//   - cgroup v1: the worker's cgroup in the memory hierarchy and in the
//     pids hierarchy; the sandbox's first process (a shell) writes itself
//     into both before it execs prlimit and bwrap, so that nothing runs
//     outside them either.
type cgroups struct {
	v2      bool
	parents []string // v2: one directory; v1: memory's, then pids'
}

// findCgroups finds where this process may make child cgroups with the
// memory and pids controllers, and checks that it can: it makes one,
// writes its limits and removes it. The error says what is missing.
func findCgroups() (*cgroups, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	var v1 map[string]string // controller → this process's directory
	var v2 string
	for line := range strings.Lines(string(self)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			if m, ok := mounts["cgroup2"]; ok {
				v2 = underMount(m, parts[2])
			}
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if m, ok := mounts[c]; ok && (c == "memory" || c == "pids") {
				if v1 == nil {
					v1 = map[string]string{}
				}
				v1[c] = underMount(m, parts[2])
			}
		}
	}
	var why []string
	if v2 == "" {
		why = append(why, "cgroup v2 is not mounted")
	} else {
		cg := &cgroups{v2: true, parents: []string{v2}}
		if err := enableV2(v2); err != nil {
			why = append(why, "cgroup v2: "+err.Error())
		} else if err := cg.check(); err != nil {
			why = append(why, "cgroup v2: "+err.Error())
		} else {
			return cg, nil
		}
	}
	if v1["memory"] != "" && v1["pids"] != "" {
		cg := &cgroups{parents: []string{v1["memory"], v1["pids"]}}
		if err := cg.check(); err != nil {
			why = append(why, "cgroup v1: "+err.Error())
		} else {
			return cg, nil
		}
	} else {
		why = append(why, "cgroup v1: the memory and pids hierarchies are not both mounted")
	}
	return nil, errors.New(strings.Join(why, "; "))
}

// cgroupMount is where a hierarchy is mounted and which of its
// directories that mount shows at its top.
type cgroupMount struct{ point, root string }

// cgroupMounts reads /proc/self/mountinfo: the cgroup2 mount ("cgroup2")
// and each v1 controller's.
func cgroupMounts() (map[string]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// id parent major:minor root point options [tags] - fstype source superoptions
		pre, post, ok := strings.Cut(s.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		m := cgroupMount{point: fields[4], root: fields[3]}
		switch tail[0] {
		case "cgroup2":
			out["cgroup2"] = m
		case "cgroup":
			for _, opt := range strings.Split(tail[2], ",") {
				out[opt] = m
			}
		}
	}
	return out, s.Err()
}

// underMount is the directory of cgroup path in mount m.
func underMount(m cgroupMount, path string) string {
	rel, err := filepath.Rel(m.root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	return filepath.Join(m.point, rel)
}

// enableV2 gives dir's children the memory and pids controllers. A cgroup
// that holds processes cannot (the no-internal-processes rule): those are
// moved into a leaf of their own, ferry-worker, first, as container
// runtimes do when started inside a container.
func enableV2(dir string) error {
	have, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return err
	}
	for _, c := range []string{"memory", "pids"} {
		if !containsWord(string(have), c) {
			return fmt.Errorf("%s does not offer the %s controller (cgroup.controllers: %q); the %s controller may be bound to cgroup v1",
				dir, c, strings.TrimSpace(string(have)), c)
		}
	}
	on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	if containsWord(string(on), "memory") && containsWord(string(on), "pids") {
		return nil
	}
	control := filepath.Join(dir, "cgroup.subtree_control")
	err = os.WriteFile(control, []byte("+memory +pids"), 0)
	if errors.Is(err, syscall.EBUSY) {
		if err = moveProcesses(dir, filepath.Join(dir, "ferry-worker")); err == nil {
			err = os.WriteFile(control, []byte("+memory +pids"), 0)
		}
	}
	if err != nil {
		return fmt.Errorf("enable memory and pids in %s: %w", control, err)
	}
	return nil
}

// moveProcesses moves every process of cgroup from into the cgroup to.
func moveProcesses(from, to string) error {
	if err := os.Mkdir(to, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	procs, err := os.ReadFile(filepath.Join(from, "cgroup.procs"))
	if err != nil {
		return err
	}
	for _, pid := range strings.Fields(string(procs)) {
		if err := os.WriteFile(filepath.Join(to, "cgroup.procs"), []byte(pid), 0); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("move process %s into %s: %w", pid, to, err)
		}
	}
	return nil
}

func containsWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// check makes a cgroup with limits and removes it, and removes the empty
// ones that workers no longer running left (a worker that crashed takes
// its sandboxes with it, not their cgroups).
func (c *cgroups) check() error {
	cg, err := c.create(64<<20, processLimit)
	if err != nil {
		return err
	}
	cg.remove()
	for _, parent := range c.parents {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			pid, ok := cgroupOwner(e.Name())
			if ok && e.IsDir() && syscall.Kill(pid, 0) == syscall.ESRCH {
				_ = os.Remove(filepath.Join(parent, e.Name())) // fails while a process is in it
			}
		}
	}
	return nil
}

// cgroupName names a sandbox's cgroup after the worker that made it.
func cgroupName() string {
	return fmt.Sprintf("ferry-%d-%s", os.Getpid(), strings.TrimPrefix(runID(), "ferry-"))
}

// cgroupOwner is the worker that made the cgroup name, if a worker did.
func cgroupOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "ferry-")
	pid, _, found := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	return n, ok && found && err == nil && n > 0
}

// cgroup is one sandbox's: a directory per hierarchy.
type cgroup struct {
	v2   bool
	dirs []string // v2: one; v1: memory's, then pids'
}

// create makes a cgroup bounding memory (without swap) and processes.
func (c *cgroups) create(memory, processes int64) (*cgroup, error) {
	name := cgroupName()
	cg := &cgroup{v2: c.v2}
	for _, parent := range c.parents {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("make cgroup %s: %w", dir, err)
		}
		cg.dirs = append(cg.dirs, dir)
	}
	mem, procs := strconv.FormatInt(memory, 10), strconv.FormatInt(processes, 10)
	limits := [][3]string{ // directory, file, value; a missing file marked optional by "?"
		{cg.dirs[0], "memory.max", mem}, {cg.dirs[0], "?memory.swap.max", "0"}, {cg.dirs[0], "pids.max", procs},
	}
	if !c.v2 {
		limits = [][3]string{
			{cg.dirs[0], "memory.limit_in_bytes", mem}, {cg.dirs[0], "?memory.memsw.limit_in_bytes", mem}, {cg.dirs[1], "pids.max", procs},
		}
	}
	for _, l := range limits {
		file, optional := strings.CutPrefix(l[1], "?")
		err := os.WriteFile(filepath.Join(l[0], file), []byte(l[2]), 0)
		if err != nil && !(optional && errors.Is(err, os.ErrNotExist)) {
			cg.remove()
			return nil, fmt.Errorf("set %s: %w", filepath.Join(l[0], file), err)
		}
	}
	return cg, nil
}

// place makes cmd start inside cg: name and args are what to run instead
// of cmd's own (v1: the shell that joins the cgroup first); the returned
// func, called once cmd started, closes what placing opened.
func (cg *cgroup) place(cmd *exec.Cmd) (func(), error) {
	if cg.v2 {
		dir, err := os.Open(cg.dirs[0])
		if err != nil {
			return nil, err
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(dir.Fd())
		return func() { _ = dir.Close() }, nil
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return nil, errors.New("render sandbox process needs sh on PATH to join its cgroup v1")
	}
	// Writing 0 to cgroup.procs moves the writer itself.
	args := []string{sh, "-c", `while [ "$1" != -- ]; do echo 0 > "$1" || { echo "` + joinFailure + ` $1" >&2; exit 125; }; shift; done; shift; exec "$@"`, "ferry-cgroup"}
	for _, dir := range cg.dirs {
		args = append(args, filepath.Join(dir, "cgroup.procs"))
	}
	cmd.Args = append(append(args, "--"), cmd.Args...)
	cmd.Path = sh
	return func() {}, nil
}

// joinFailure starts the error of a sandbox that could not join its
// cgroup v1.
const joinFailure = "ferry-sandbox: cannot join the cgroup"

// oomKilled tells whether the kernel killed a process of cg for its
// memory limit.
func (cg *cgroup) oomKilled() bool {
	file := "memory.events"
	if !cg.v2 {
		file = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(cg.dirs[0], file))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "oom_kill "); ok {
			return n != "0"
		}
	}
	return false
}

// processLimitHit tells whether cg refused a process or thread for its
// process limit.
func (cg *cgroup) processLimitHit() bool {
	b, err := os.ReadFile(filepath.Join(cg.dirs[len(cg.dirs)-1], "pids.events"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "max "); ok {
			return n != "0"
		}
	}
	return false
}

// remove ends what still runs in cg and removes it. bwrap's PID namespace
// ends with its first process, so at most exiting processes are left: a
// cgroup is removed once they are gone.
func (cg *cgroup) remove() {
	for _, dir := range cg.dirs {
		for try := 0; ; try++ {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) || try == 100 {
				break
			}
			if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
				procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
				for _, pid := range strings.Fields(string(procs)) {
					if n, err := strconv.Atoi(pid); err == nil {
						_ = syscall.Kill(n, syscall.SIGKILL)
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
