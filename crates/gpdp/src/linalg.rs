//! The dense linear algebra behind the posterior and the samplers, with a
//! fixed task count so that results do not depend on how many threads run
//! them.
//!
//! faer's parallel algorithms split their work into as many tasks as the
//! parallelism they are given asks for; left to its default, that is the
//! number of threads in rayon's pool, and the floating-point results then
//! change (in the last bits) with `RAYON_NUM_THREADS`. Seeded output must be
//! byte-identical on any machine and thread count, so every call here passes
//! `Par::rayon(TASKS)`: the same split — hence the same arithmetic — whether
//! one thread or many execute the tasks.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{LltError, cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// The number of tasks parallel kernels are split into, on every machine.
pub const TASKS: usize = 4;

/// The fixed parallelism of every dense kernel.
pub(crate) fn par() -> Par {
    Par::rayon(TASKS)
}

/// The lower Cholesky factor L (LLᵀ = A) of a symmetric positive-definite
/// matrix given by its lower triangle (the upper triangle is ignored).
pub(crate) fn cholesky_lower(a: &Mat<f64>) -> Result<Mat<f64>, LltError> {
    let n = a.nrows();
    let mut l = Mat::<f64>::zeros(n, n);
    l.copy_from_triangular_lower(a);
    let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par(), Default::default()));
    cholesky_in_place(l.as_mut(), Default::default(), par(), MemStack::new(&mut mem), Default::default())?;
    for j in 1..n {
        for i in 0..j {
            l[(i, j)] = 0.0;
        }
    }
    Ok(l)
}

/// Factors a symmetric positive-definite matrix, given by its lower
/// triangle, in place into its lower Cholesky factor (the upper triangle is
/// set to 0). No second n × n matrix is allocated.
pub(crate) fn cholesky_in_place_lower(a: &mut Mat<f64>) -> Result<(), LltError> {
    let n = a.nrows();
    let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par(), Default::default()));
    cholesky_in_place(a.as_mut(), Default::default(), par(), MemStack::new(&mut mem), Default::default())?;
    for j in 1..n {
        for i in 0..j {
            a[(i, j)] = 0.0;
        }
    }
    Ok(())
}

/// The lower triangle of C ← C + α·A·B (the strict upper triangle of C is
/// neither read nor written): half the work of a full product when the
/// result is symmetric.
pub(crate) fn add_mul_lower(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>, alpha: f64) {
    use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri};
    tri(
        c,
        BlockStructure::TriangularLower,
        Accum::Add,
        a,
        BlockStructure::Rectangular,
        b,
        BlockStructure::Rectangular,
        alpha,
        par(),
    );
}

/// L·B for a lower-triangular L (its strict upper triangle is not read).
pub(crate) fn lower_mul(l: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri};
    let mut c = Mat::<f64>::zeros(l.nrows(), b.ncols());
    tri(
        c.as_mut(),
        BlockStructure::Rectangular,
        Accum::Replace,
        l,
        BlockStructure::TriangularLower,
        b,
        BlockStructure::Rectangular,
        1.0,
        par(),
    );
    c
}

/// A·B.
#[cfg(test)]
pub(crate) fn mul(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut c = Mat::<f64>::zeros(a.nrows(), b.ncols());
    matmul(c.as_mut(), Accum::Replace, a, b, 1.0, par());
    c
}

/// C ← C − A·B.
pub(crate) fn sub_mul(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    matmul(c, Accum::Add, a, b, -1.0, par());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_reconstructs_and_products_match_loops() {
        let n = 60;
        let b = Mat::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
        let mut a = mul(b.as_ref(), b.transpose());
        for i in 0..n {
            a[(i, i)] += 1.0;
        }
        let l = cholesky_lower(&a).unwrap();
        let llt = mul(l.as_ref(), l.transpose());
        for j in 0..n {
            for i in 0..n {
                assert!((llt[(i, j)] - a[(i, j)]).abs() < 1e-12 * n as f64, "({i}, {j})");
                if i < j {
                    assert_eq!(l[(i, j)], 0.0);
                }
                let direct: f64 = (0..n).map(|k| b[(i, k)] * b[(j, k)]).sum::<f64>() + if i == j { 1.0 } else { 0.0 };
                assert!((a[(i, j)] - direct).abs() < 1e-12);
            }
        }
        let mut c = a.clone();
        sub_mul(c.as_mut(), b.as_ref(), b.transpose());
        for i in 0..n {
            assert!((c[(i, i)] - 1.0).abs() < 1e-12);
        }
        let mut bad = Mat::<f64>::identity(3, 3);
        bad[(2, 2)] = -1.0;
        assert!(cholesky_lower(&bad).is_err());
    }
}
