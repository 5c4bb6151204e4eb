// Which clips need their colours converted, and how the box tells whether its ffmpeg can.
import t from 'tap';
import { colourConversionFilters, colourConversionFor, filterListed } from '../../../src/vision/media/colour-conversion.js';

t.test('the colour tags decide the conversion', async (t) => {
  t.equal(colourConversionFor('smpte2084', 'bt2020'), 'pq', 'HDR10 / Dolby Vision 8.1');
  t.equal(colourConversionFor('arib-std-b67', 'bt2020'), 'hlg', "iPhone's HLG (Dolby Vision 8.4)");
  t.equal(colourConversionFor('arib-std-b67', null), 'hlg', 'the transfer alone is enough');
  t.equal(colourConversionFor('bt2020-10', 'bt2020'), 'bt2020', 'SDR in the BT.2020 gamut');
  t.equal(colourConversionFor('bt709', 'bt709'), null);
  t.equal(colourConversionFor('smpte170m', 'smpte170m'), null);
  t.equal(colourConversionFor(null, null), null, 'untagged video is read as sRGB/BT.709');
});

t.test('the conversion ends in full-range sRGB with the tonemap filter clipping highlights', async (t) => {
  const chain = colourConversionFilters({ transfer: 'arib-std-b67', primaries: 'bt2020', matrix: 'bt2020nc', range: 'tv' }).join(',');
  t.match(chain, /zscale=transfer=linear:npl=203/);
  t.match(chain, /zscale=primaries=bt709/);
  t.match(chain, /tonemap=tonemap=clip:desat=0/);
  t.match(chain, /zscale=transfer=iec61966-2-1:matrix=bt709:range=full/);
});

t.test('what a clip leaves untagged is given to zscale, what it tags is left to the tags', async (t) => {
  const full = colourConversionFilters({ transfer: 'smpte2084', primaries: 'bt2020', matrix: 'bt2020nc', range: 'tv' })[0]!;
  t.notMatch(full, /in=/, 'a fully tagged clip speaks for itself');
  const partial = colourConversionFilters({ transfer: 'arib-std-b67', primaries: 'bt2020', matrix: null, range: null })[0]!;
  t.match(partial, /matrixin=bt2020nc/);
  t.match(partial, /rangein=tv/);
  t.notMatch(partial, /transferin|primariesin/);
  t.match(
    colourConversionFilters({ transfer: null, primaries: 'bt2020', matrix: 'bt2020nc', range: 'tv' })[0]!,
    /transferin=bt709/,
    'BT.2020 SDR without its transfer tag',
  );
});

t.test('filters are found by name in the -filters listing, not by substring', async (t) => {
  const listing = [
    'Filters:',
    '  T.. = Timeline support',
    ' ------',
    ' .S. tonemap           V->V       Conversion to/from different dynamic ranges.',
    ' ... tonemap_opencl    V->V       Perform HDR to SDR conversion with tonemapping.',
    ' TS. colorspace        V->V       Convert between colorspaces.',
  ].join('\n');
  t.ok(filterListed(listing, 'tonemap'));
  t.notOk(filterListed(listing, 'zscale'), 'absent');
  t.notOk(filterListed(listing, 'tonemap_'), 'a prefix is not a name');
  t.notOk(filterListed(listing, 'Convert'), 'words of a description are not names');
});
