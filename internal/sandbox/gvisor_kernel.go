package sandbox

import (
	"fmt"
	"os"
	"strings"
)

// gvisorBuild is the build line gVisor's kernel reports in /proc/version
// (every release so far: "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54
// PST 2016" from Debian's 20221219, "Linux version 4.19.0-gvisor #1 SMP …"
// from a current one); no Linux kernel of a real node says it.
const gvisorBuild = "#1 SMP Sun Jan 10 15:06:54 PST 2016"

// UnderGVisor says whether this process runs on gVisor's kernel (a pod of
// a RuntimeClass whose handler is runsc), read from procVersion
// (/proc/version); when not, the error says what the kernel is.
func UnderGVisor(procVersion string) error {
	b, err := os.ReadFile(procVersion)
	if err != nil {
		return fmt.Errorf("read %s to find whether gVisor runs this worker: %w", procVersion, err)
	}
	v := strings.TrimSpace(string(b))
	if strings.Contains(v, gvisorBuild) || strings.Contains(v, "-gvisor ") {
		return nil
	}
	return fmt.Errorf("this worker does not run on gVisor: %s says %q", procVersion, v)
}
