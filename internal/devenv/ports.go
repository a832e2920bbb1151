package devenv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Ports are taken below the kernel's ephemeral range (32768 and up on
// Linux), where no outgoing connection can grab one between the choice and
// the bind, and each is reserved across processes by a lock file held until
// the stack stops, so that stacks started at once by parallel test binaries
// never pick the same port.
const (
	portMin = 20000
	portMax = 32000
)

// portReservation holds the lock files of reserved ports.
type portReservation struct {
	files []*os.File
}

func (r *portReservation) release() error {
	var errs []error
	for _, f := range r.files {
		errs = append(errs, f.Close(), os.Remove(f.Name()))
	}
	r.files = nil
	return errors.Join(errs...)
}

// freePorts reserves n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, *portReservation, error) {
	dir := filepath.Join(os.TempDir(), "ferry-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, nil, fmt.Errorf("reserve loopback ports: %w", err)
	}
	res := &portReservation{}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 50*n {
			_ = res.release()
			return nil, nil, fmt.Errorf("reserve loopback ports: no free port found in %d-%d after %d tries", portMin, portMax, tries)
		}
		port := portMin + rand.IntN(portMax-portMin)
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			_ = f.Close() // another stack holds it
			continue
		}
		l, err := net.Listen("tcp", hostPort(port))
		if err != nil {
			_ = f.Close() // in use by something else
			continue
		}
		_ = l.Close()
		res.files = append(res.files, f)
		ports = append(ports, port)
	}
	return ports, res, nil
}

func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
