package redisconn

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTLS: a rediss:// URL speaks TLS, verifying the server's
// certificate against the URL's host name.
func TestTLS(t *testing.T) {
	cert, roots := selfSigned(t, "localhost")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() { servePong(ln) })
	port := ln.Addr().(*net.TCPAddr).Port

	opts, err := ParseURL("rediss://localhost:" + strconv.Itoa(port) + "/0")
	if err != nil {
		t.Fatal(err)
	}
	opts.TLS.RootCAs = roots
	c := New(opts)
	defer c.Close()
	if v, err := c.Do(context.Background(), "PING"); err != nil || v != "PONG" {
		t.Errorf("PING over TLS = %v, %v; want PONG", v, err)
	}

	opts, _ = ParseURL("rediss://localhost:" + strconv.Itoa(port) + "/0") // the system's roots: ours is not among them
	untrusted := New(opts)
	defer untrusted.Close()
	if _, err := untrusted.Do(context.Background(), "PING"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("PING to a server whose certificate no root signed: %v; want a certificate error", err)
	}
}

// servePong answers +PONG to every command on every connection of ln,
// until ln is closed.
func servePong(ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Go(func() {
			defer nc.Close()
			br := bufio.NewReader(nc)
			for {
				if _, err := readReply(br); err != nil {
					return
				}
				if _, err := nc.Write([]byte("+PONG\r\n")); err != nil {
					return
				}
			}
		})
	}
}

// selfSigned is a certificate for host, and the pool that trusts it.
func selfSigned(t *testing.T, host string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}
