"""The shared argument checks: seeds, generators and OS entropy for every ``rng``."""

import numpy as np
import pytest

from pdpkit._validation import as_generator


def test_int_seed_reproduces_and_generator_passes_through():
    a = as_generator(7).standard_normal(5)
    b = as_generator(7).standard_normal(5)
    np.testing.assert_array_equal(a, b)
    gen = np.random.default_rng(3)
    assert as_generator(gen) is gen
    assert isinstance(as_generator(None), np.random.Generator)
    # two OS-entropy generators differ (probability of a collision ~2^-64)
    assert as_generator(None).integers(2**63) != as_generator(None).integers(2**63)


@pytest.mark.parametrize("bad", [1.5, "3", True, np.random.RandomState(0)])
def test_other_types_are_type_errors_naming_the_parameter(bad):
    with pytest.raises(TypeError, match="random_state"):
        as_generator(bad, "random_state")


def test_negative_seed_is_a_value_error():
    with pytest.raises(ValueError, match="rng"):
        as_generator(-1)
