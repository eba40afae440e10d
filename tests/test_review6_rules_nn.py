"""cross_entropy refuses a negative label of a narrow integer dtype beside many classes: read as unsigned, an
int8 -1 is 255, a class of 300 logits, so the check let it through and its one-hot row of zeros counted 0."""

import numpy as np
import pytest

import trackerlab as tl

Z = np.linspace(-1.0, 2.0, 600).reshape(2, 300)


@pytest.mark.parametrize("labels", [np.array([-1, 3], np.int8), np.array([3, -128], np.int8), np.array([5, -1], np.int16)])
def test_cross_entropy_refuses_a_negative_narrow_label_beside_many_classes(labels):
    z = Z if labels.dtype.itemsize == 1 else np.zeros((2, 40000))
    with pytest.raises(ValueError, match="cross_entropy: the labels must be classes 0 to"):
        tl.cross_entropy(tl.param(z), labels)


@pytest.mark.parametrize("labels", [np.array([299, 127], np.int16), np.array([255, 127], np.uint8), np.array([1, 0], np.int8)])
def test_cross_entropy_of_narrow_labels_in_range_is_the_written_out_loss(labels):
    log_p = Z - Z.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    want = -(log_p[0, labels[0]] + log_p[1, labels[1]]) / 2
    np.testing.assert_allclose(tl.data(tl.cross_entropy(tl.param(Z), labels)), want, rtol=1e-12)
