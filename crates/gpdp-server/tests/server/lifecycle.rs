//! The embedding entry point, `gpdp_server::start`: ready for requests when
//! it returns, an address already in use is an error returned there (not a
//! panic on the server's thread), `stop` closes the listening socket, and
//! a server started again on the same state answers as before.

use std::net::{TcpListener, TcpStream};

use crate::common::{Server, setup, spec};

#[test]
fn a_started_server_serves_at_once_stops_and_starts_again_on_its_state() {
    let (dir, config) = setup("", true);
    let pts = [[0.1, 0.2], [0.4, 0.4]];
    let s = Server::start(&config);
    let addr = s.addr();
    assert_ne!(addr.port(), 0, "the chosen port is reported");
    // No wait, no retry: the first request is answered.
    let id = s.create(&spec(dir.path()));
    let a = s.eval(&id, &pts);
    drop(s); // stops, and waits until stopped
    assert!(TcpStream::connect(addr).is_err(), "{addr} still accepts connections after the stop");
    let s = Server::start(&config);
    assert_eq!(s.eval(&id, &pts), a, "values revealed before the stop are answered again");
    assert_eq!(s.get(&format!("/releases/{id}")).1["revealed"][0], 2);
}

#[test]
fn an_address_in_use_is_an_error_returned_by_start() {
    let (_dir, config) = setup("", false);
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut cfg = gpdp_server::Config::load(&config).unwrap();
    cfg.bind = taken.local_addr().unwrap();
    let err = gpdp_server::start(cfg).unwrap_err().to_string();
    assert!(err.contains(&format!("binding {}", taken.local_addr().unwrap())), "{err}");
    // The listener that holds the port is untouched.
    assert!(TcpStream::connect(taken.local_addr().unwrap()).is_ok());
}
