// Command startup measures how fast a Hearth binary becomes ready: it execs
// `hearth serve` on an existing data directory N times and records the time
// from exec to the first 200 from GET /health (polled in a tight loop, so the
// resolution is well under a millisecond), then the resident memory of an
// idle server. bench/startup.sh builds the binary and runs this; it is not
// part of CI.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "", "hearth binary")
	dataDir := flag.String("data-dir", "", "data directory (created by a first, unmeasured start when empty)")
	n := flag.Int("n", 20, "measured starts")
	idle := flag.Duration("idle", 2*time.Second, "idle time before reading VmRSS")
	flag.Parse()
	if *bin == "" || *dataDir == "" {
		fmt.Fprintln(os.Stderr, "usage: startup -bin PATH -data-dir DIR [-n 20]")
		os.Exit(2)
	}
	if err := run(*bin, *dataDir, *n, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

func run(bin, dataDir string, n int, idle time.Duration) error {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	first, err := start(bin, dataDir, client)
	if err != nil {
		return err
	}
	if err := first.stop(); err != nil {
		return err
	}
	fmt.Printf("first start (creates the database): %s\n", ms(first.ready))

	times := make([]time.Duration, 0, n)
	for range n {
		s, err := start(bin, dataDir, client)
		if err != nil {
			return err
		}
		times = append(times, s.ready)
		if err := s.stop(); err != nil {
			return err
		}
	}
	slices.Sort(times)
	fmt.Printf("start on an existing database, exec → first /health 200, n=%d: min %s  median %s  max %s\n",
		n, ms(times[0]), ms(times[len(times)/2]), ms(times[len(times)-1]))

	s, err := start(bin, dataDir, client)
	if err != nil {
		return err
	}
	time.Sleep(idle)
	rss, err := vmRSS(s.cmd.Process.Pid)
	stopErr := s.stop()
	if err != nil {
		return err
	}
	fmt.Printf("idle RSS after %s: %s\n", idle, rss)
	return stopErr
}

type server struct {
	cmd    *exec.Cmd
	ready  time.Duration
	exited chan struct{}
	log    *strings.Builder // read only after exited is closed
}

// freePort asks the kernel for a port that is free right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func start(bin, dataDir string, client *http.Client) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/health", port)
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--data-dir", dataDir)
	s := &server{cmd: cmd, exited: make(chan struct{}), log: new(strings.Builder)}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(s.exited) }()
	deadline := t0.Add(30 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.ready = time.Since(t0)
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("server exited before /health answered 200:\n%s", s.log)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-s.exited
			return nil, fmt.Errorf("no 200 from %s within 30 s:\n%s", url, s.log)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func (s *server) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		return errors.New("server did not stop on SIGTERM")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("server exited with %d:\n%s", code, s.log)
	}
	return nil
}

func vmRSS(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("no VmRSS in /proc status")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
