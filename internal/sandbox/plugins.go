package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// pluginSystemDirs are the host directories a plugin's commands see, read
// only: the programs and libraries of the system (a shell, coreutils),
// never /etc, /home, /root or /var.
var pluginSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"}

// pluginMounts are the mounts and PATH of a render that may run
// config-management plugins: the system's programs and the plugin
// directory, whose bin/ comes first on PATH.
func (r *Renderer) pluginMounts() ([]Mount, string) {
	var mounts []Mount
	for _, dir := range pluginSystemDirs {
		// /bin is often a symlink to /usr/bin: bind what it points to.
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			continue
		}
		if info, err := os.Stat(real); err == nil && info.IsDir() {
			mounts = append(mounts, Mount{Source: real, Target: dir})
		}
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	if r.PluginDir == "" {
		return mounts, path
	}
	real, err := filepath.EvalSymlinks(r.PluginDir)
	if err != nil {
		return mounts, path
	}
	mounts = append(mounts, Mount{Source: real, Target: PluginDir})
	path = PluginDir + "/bin:" + path
	// A symlink in bin/ to a program elsewhere (a tools cache) would dangle
	// in the sandbox: the program it leads to is mounted in toolsDir, next
	// on PATH.
	entries, _ := os.ReadDir(filepath.Join(real, "bin"))
	linked := false
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(filepath.Join(real, "bin", e.Name()))
		if err != nil {
			continue
		}
		if info, err := os.Stat(target); err == nil && info.Mode().IsRegular() {
			mounts = append(mounts, Mount{Source: target, Target: toolsDir + "/" + e.Name()})
			linked = true
		}
	}
	if linked {
		path = PluginDir + "/bin:" + toolsDir + ":" + strings.TrimPrefix(path, PluginDir+"/bin:")
	}
	return mounts, path
}

// toolsDir holds the programs that symlinks in the plugin directory's
// bin/ lead to.
const toolsDir = "/ferry/tools"
