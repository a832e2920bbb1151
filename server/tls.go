package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// serverTLS is the listener's TLS: the operator's certificate, or a
// self-signed one for the listen address, and the SHA-256 fingerprint of
// the certificate served (hex, colon-separated, as openssl prints it).
func (c *config) serverTLS() (*tls.Config, string, error) {
	var cert tls.Certificate
	var err error
	if c.tlsCert != "" {
		cert, err = tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, "", fmt.Errorf("--tls-cert and --tls-key: %w", err)
		}
	} else if cert, err = selfSigned(c.listen); err != nil {
		return nil, "", fmt.Errorf("make a self-signed certificate: %w", err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02X", b)
	}
	// HTTP/2 first: a browser opens at most six HTTP/1.1 connections to a
	// host, and every open page holds one with its stream of changes.
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}},
		strings.Join(hexes, ":"), nil
}

// selfSigned is a certificate for the host of addr, localhost and the
// loopback addresses, valid for a year.
func selfSigned(addr string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "ferry-server"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// listen opens the HTTPS listener.
func listen(addr string, cfg *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return tls.NewListener(ln, cfg), nil
}
