from finops.files import locked, recover

def test_recover_removes_a_dead_holders_lock_and_keeps_a_live_one(tmp_path):
    lock = tmp_path / ".reconcile-history.lock"
    lock.write_bytes(b"")  # what a killed holder leaves: the file, unlocked
    assert recover(tmp_path) == [lock] and not lock.exists()
    with locked(lock, wait_s=1):
        assert recover(tmp_path) == [] and lock.exists()  # held: left alone
    assert not lock.exists()
