//! The embedding entry point, `gpdp_server::start`: ready for requests when
//! it returns, an address already in use is an error returned there (not a
//! panic on the server's thread), `stop` closes the listening socket, and
//! a server started again on the same state answers as before (also from a
//! store of an older format).

use std::net::{TcpListener, TcpStream};

use serde_json::json;

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

/// Issue 40: a store written before σ was in data units under a response
/// range (store version 0: σ and the revealed values in the range's
/// half-widths) is converted when the server opens it, so the restarted
/// release answers every revealed point with the value it had and goes on
/// with the same mechanism.
#[test]
fn a_store_from_before_data_unit_sigma_restarts_with_the_same_values() {
    let (dir, config) = setup("", false);
    let mut sp = spec(dir.path());
    let o = sp.as_object_mut().unwrap();
    o.remove("response_bound");
    o.remove("dataset");
    o.insert("response_range".into(), json!([-3.0, 5.0]));
    o.insert("scale".into(), json!(2.0));
    let pts = [[0.2, 0.3], [0.7, 0.9], [0.5, 0.1]];
    let (id, before, public) = {
        let s = Server::start(&config);
        let id = s.create(&sp);
        let v = s.eval(&id, &pts);
        (id.clone(), v, s.get(&format!("/releases/{id}")).1)
    };
    assert!(public["report"]["data_policy"]["scale_meaning"]["note"].as_str().unwrap().contains("prior sd of 2 mg/L"));
    // Write the store as a version-0 server left it: σ and the values in half-widths (h = 4).
    {
        let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
        let stored: String = db.query_row("SELECT spec FROM releases WHERE id = ?1", [&id], |r| r.get(0)).unwrap();
        let mut old: serde_json::Value = serde_json::from_str(&stored).unwrap();
        assert_eq!(old["scale"], 2.0);
        old["scale"] = json!(0.5);
        db.execute("UPDATE releases SET spec = ?2 WHERE id = ?1", [&id, &old.to_string()]).unwrap();
        db.execute("UPDATE revealed SET value = value / 4.0", []).unwrap();
        db.execute_batch("PRAGMA user_version = 0;").unwrap();
    }
    let s = Server::start(&config);
    let (st, one) = s.get(&format!("/releases/{id}"));
    assert_eq!((st, one["status"].as_str()), (200, Some("active")), "{one}");
    assert_eq!(s.eval(&id, &pts), before, "revealed points keep their values");
    let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
    let version: i64 = db.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, gpdp_server::store::STORE_VERSION);
    let stored: String = db.query_row("SELECT spec FROM releases WHERE id = ?1", [&id], |r| r.get(0)).unwrap();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&stored).unwrap()["scale"], 2.0);
}
