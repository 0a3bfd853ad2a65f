import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ProblemException } from '../common/problem';
import { loadOpsAssets, OPS_CONTENT_SECURITY_POLICY, type OpsAsset } from './ops-assets';

/** The live ops page: static HTML, CSS and JS that read the public CPaaS health routes. No auth, like them. */
@ApiExcludeController()
@Controller('ops')
export class OpsController {
  private readonly assets = loadOpsAssets();

  @Get()
  page(@Res() response: Response): void {
    send(response, this.assets.page);
  }

  @Get(':asset')
  asset(@Param('asset') name: string, @Res() response: Response): void {
    if (name !== 'ops.css' && name !== 'ops.js') {
      throw new ProblemException({ status: 404, slug: 'not-found', title: 'Not found', detail: `No ops page asset named "${name}".` });
    }
    send(response, this.assets[name]);
  }
}

function send(response: Response, asset: OpsAsset): void {
  response
    .status(200)
    .set({
      'Content-Type': asset.contentType,
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': OPS_CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
    })
    .send(asset.body);
}
