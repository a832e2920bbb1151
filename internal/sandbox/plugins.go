package sandbox

import (
	"os"
	"path/filepath"
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
	if r.PluginDir != "" {
		if real, err := filepath.EvalSymlinks(r.PluginDir); err == nil {
			mounts = append(mounts, Mount{Source: real, Target: PluginDir})
			path = PluginDir + "/bin:" + path
		}
	}
	return mounts, path
}
