package devenv

import (
	"fmt"
	"net"
	"strconv"
)

// freePorts returns n distinct free TCP ports on 127.0.0.1. All listeners stay
// open until every port is chosen, so one call never returns a port twice.
// Another process may still take a port before its user binds it; the window
// is short and the failure loud (the process exits with "address in use").
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
