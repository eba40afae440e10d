"""``cross_entropy`` with a label that names no class: ``-1`` (which a NumPy user may read as the last class)
or ``n`` for ``n`` classes. Its one-hot row was all zeros, so its loss counted 0 (and the mean still divided by
it) and its gradient was 0, silently; it is now an error naming the labels' range. Labels in range, of every
integer dtype and layout, still give the loss and gradient of their one-hot rows."""

import numpy as np
import pytest

import trackerlab as tl

LOGITS = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]])


@pytest.mark.parametrize(
    "labels",
    [np.array([-1, 0]), np.array([3, 0]), np.array([0, 7], np.uint8), np.array([-128, 0], np.int8)],
    ids=["-1", "n", "uint8 beyond", "int8 most negative"],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_a_label_outside_the_classes_is_an_error(labels, reduction):
    with pytest.raises(ValueError, match=r"cross_entropy: the labels must be classes 0 to 2"):
        tl.cross_entropy(tl.param(LOGITS), labels, reduction=reduction)
    with pytest.raises(ValueError, match=r"cross_entropy: the labels must be classes 0 to 2"):
        tl.gradient(lambda x: tl.cross_entropy(x, labels, reduction=reduction), LOGITS)


def test_a_label_outside_the_classes_on_another_axis_is_an_error():
    with pytest.raises(ValueError, match=r"classes 0 to 1 of the logits' axis 0"):
        tl.cross_entropy(tl.param(LOGITS), np.array([0, 1, 2]), axis=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_labels_in_range_give_the_loss_and_gradient_of_their_one_hot_rows(dtype):
    labels = np.array([2, 0], dtype=dtype)[::-1][::-1]  # a view, as a slice of a data set gives
    one_hot = np.eye(3)[labels.astype(int)]
    x = tl.param(LOGITS)
    loss = tl.cross_entropy(x, labels)
    shifted = LOGITS - LOGITS.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    assert float(tl.data(loss)) == pytest.approx(-(one_hot * log_p).sum() / 2)
    tl.back_(loss)
    np.testing.assert_allclose(x.grad, (np.exp(log_p) - one_hot) / 2)


def test_an_empty_batch_of_labels_is_not_refused():
    loss = tl.cross_entropy(tl.param(np.zeros((0, 3))), np.zeros(0, dtype=int), reduction="sum")
    assert float(tl.data(loss)) == 0.0
